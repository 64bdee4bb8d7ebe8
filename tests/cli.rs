//! End-to-end tests of the `prove` and `verify` binaries: the user-visible path, bad input,
//! tampered certificates, partial runs, spot checks and the summary line's timings.

mod common;

use common::{bin, json, stderr, stdout, Env};

#[test]
fn prove_and_verify_9689() {
    let env = Env::new();
    let cert = env.path("out.cbor");
    let o = env.prove(&["9689", "--cert", cert.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["exponent"], 9689);
    assert_eq!(j["worktype"], "LL");
    assert_eq!(j["status"], "P");
    assert_eq!(j["res64"], "0000000000000000");
    assert!(j["shift-count"].as_u64().unwrap() < 9689);
    assert_eq!(j["mersenne-cert"]["certificate"]["blake3"].as_str().unwrap().len(), 64);
    let v = env.verify(&cert, &[]);
    assert!(v.status.success(), "{}", stderr(&v));
    assert!(stdout(&v).contains("M9689 is prime"), "{}", stdout(&v));
}

#[test]
fn prp_reports_type_1() {
    let env = Env::new();
    let cert = env.path("prp.cbor");
    let o = env.prove(&["4423", "--prp", "--cert", cert.to_str().unwrap()]);
    let j = json(&o);
    assert_eq!(j["worktype"], "PRP-3");
    assert_eq!(j["status"], "P");
    assert_eq!(j["res64"], "0000000000000001");
    assert_eq!(j["residue-type"], 1);
    assert!(env.verify(&cert, &[]).status.success());
    let o = env.prove(&["4427", "--prp", "--shift", "0"]);
    assert!(!o.status.success(), "4427 = 19 * 233 is not prime");
    let o = env.prove(&["4447", "--prp", "--shift", "0"]);
    assert_eq!(json(&o)["status"], "C");
}

#[test]
fn partial_run_matches_the_external_table_and_verifies() {
    let env = Env::new();
    let cert = env.path("partial.cbor");
    let o = env.prove(&["86243", "--iterations", "10000", "--cert", cert.to_str().unwrap()]);
    let j = json(&o);
    assert_eq!(j["status"], "partial");
    assert_eq!(j["res64"], "23992CCD735A03D9");
    assert_eq!(j["mersenne-cert"]["iterations"], 10000);
    let v = env.verify(&cert, &["--sample", "2"]);
    assert_eq!(v.status.code(), Some(3), "a spot check is no verification: {}", stderr(&v));
    assert!(stderr(&v).contains("SPOT CHECK ONLY"), "{}", stderr(&v));
    assert!(stdout(&v).starts_with("spot-checked, not verified"), "{}", stdout(&v));
    assert!(env.verify(&cert, &[]).status.success());
}

#[test]
fn bad_input_gives_one_line_errors() {
    let env = Env::new();
    for (args, needle) in [
        (vec!["9"], "not prime"),
        (vec!["1"], "at least 2"),
        (vec!["0"], "at least 2"),
        (vec!["abc"], "not a number"),
        (vec!["-7"], "not a number"),
        (vec!["1099511627791"], "larger than"),
        (vec!["89", "--shift", "89"], "out of range"),
        (vec!["89", "--shift", "x"], "--shift"),
        (vec!["89", "--iterations", "88"], "exceeds"),
        (vec!["89", "--iterations", "0"], "at least 1"),
        (vec!["89", "--checkpoint-every", "0"], "at least 1"),
        (vec!["89", "--cert", "/nonexistent-dir/x.cbor"], "cannot write the certificate"),
    ] {
        let o = env.prove(&args);
        let err = stderr(&o);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(stdout(&o).is_empty());
    }
    // An unreadable or malformed key.
    let cert = env.path("c.cbor");
    let state = env.path("state");
    let o = bin("prove")
        .args(["89", "--engine", "cpu", "--cert", cert.to_str().unwrap(), "--key", "/nonexistent/key"])
        .arg("--state-dir")
        .arg(&state)
        .output()
        .unwrap();
    assert!(!o.status.success() && !stderr(&o).contains("panicked"), "{}", stderr(&o));
    std::fs::write(env.path("badkey"), "not a key").unwrap();
    let o = bin("prove")
        .args(["89", "--engine", "cpu", "--cert", cert.to_str().unwrap()])
        .arg("--key")
        .arg(env.path("badkey"))
        .arg("--state-dir")
        .arg(&state)
        .output()
        .unwrap();
    assert!(!o.status.success() && !stderr(&o).contains("panicked"), "{}", stderr(&o));
    assert!(!cert.exists());
}

#[test]
fn tampered_truncated_and_foreign_certificates_are_rejected() {
    let env = Env::new();
    let cert = env.path("c.cbor");
    assert!(env.prove(&["521", "--cert", cert.to_str().unwrap()]).status.success());
    let good = std::fs::read(&cert).unwrap();
    let bad = env.path("bad.cbor");
    // Flip bytes spread over the whole file (the cert module flips every byte in its own tests).
    for i in (0..good.len()).step_by(good.len() / 40 + 1) {
        let mut b = good.clone();
        b[i] ^= 0x01;
        std::fs::write(&bad, &b).unwrap();
        let v = env.verify(&bad, &[]);
        assert!(!v.status.success(), "flip at byte {i} accepted");
        assert!(!stderr(&v).contains("panicked"));
    }
    std::fs::write(&bad, &good[..good.len() / 2]).unwrap();
    assert!(!env.verify(&bad, &[]).status.success());
    std::fs::write(&bad, b"garbage").unwrap();
    assert!(!env.verify(&bad, &[]).status.success());
    assert!(!env.verify(&env.path("missing.cbor"), &[]).status.success());
    // --trust: the right key passes, another key fails.
    let pubkey = {
        let sk = ed25519_dalek::SigningKey::from_bytes(&[0x11; 32]);
        hex::encode(sk.verifying_key().as_bytes())
    };
    assert!(env.verify(&cert, &["--trust", &pubkey]).status.success());
    let other = hex::encode(ed25519_dalek::SigningKey::from_bytes(&[0x22; 32]).verifying_key().as_bytes());
    let v = env.verify(&cert, &["--trust", &other]);
    assert!(!v.status.success());
    assert!(!env.verify(&cert, &["--trust", "zz"]).status.success());
}

#[test]
fn json_file_and_p2() {
    let env = Env::new();
    let results = env.path("results.json.txt");
    let o = env.prove(&["2", "--json", results.to_str().unwrap()]);
    assert_eq!(json(&o)["status"], "P");
    let o = env.prove(&["3", "--prp", "--json", results.to_str().unwrap()]);
    assert_eq!(json(&o)["status"], "P");
    // M2 has no PRP test and no certificate: a clear refusal.
    let o = env.prove(&["2", "--prp"]);
    assert!(!o.status.success() && stderr(&o).contains("by inspection"));
    assert_eq!(std::fs::read_to_string(&results).unwrap().lines().count(), 2);
}

/// The summary line's (whole run, loop alone) ms/iter: "…, 3.26 s, 0.1631 ms/iter, loop 0.1630 ms/iter; checks: …".
fn ms_per_iter(err: &str) -> (f64, f64) {
    let line = err
        .lines()
        .find(|l| l.contains(" ms/iter, loop "))
        .unwrap_or_else(|| panic!("no summary line with the loop time: {err}"));
    let (head, tail) = line.split_once(" ms/iter, loop ").unwrap();
    let whole = head.rsplit(", ").next().unwrap().parse().unwrap();
    let looped = tail.split_once(" ms/iter; checks: ").unwrap_or_else(|| panic!("{line}")).0.parse().unwrap();
    (whole, looped)
}

#[test]
fn summary_reports_the_loop_time_without_the_final_checks() {
    let env = Env::new();
    for kind in [&[][..], &["--prp"][..]] {
        let o = env.prove(&[&["86243", "--iterations", "5000"][..], kind].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        let (whole, looped) = ms_per_iter(&stderr(&o));
        assert!(looped > 0.0 && looped <= whole, "{kind:?}: loop {looped} vs whole {whole} ms/iter: {}", stderr(&o));
    }
    // The final checks are left out: LL's Jacobi check of a 1,257,787-bit residue takes several
    // times 20 GMP squarings; a PRP run to its first Gerbicz boundary squares 1000 times in the
    // loop and 1000 more in the final check (both runs then wait for the spot checks in flight).
    for (args, most) in [
        (&["1257787", "--iterations", "20"][..], 0.75),
        (&["86243", "--prp", "--iterations", "1000", "--gerbicz-block", "1000"][..], 0.9),
    ] {
        let o = env.prove(args);
        assert!(o.status.success(), "{}", stderr(&o));
        let (whole, looped) = ms_per_iter(&stderr(&o));
        assert!(
            looped > 0.0 && looped < most * whole,
            "{args:?}: loop {looped} vs whole {whole} ms/iter: {}",
            stderr(&o)
        );
    }
}

#[test]
fn tune_times_the_gpu_or_says_why_it_cannot() {
    let env = Env::new();
    // Without a usable GPU (as in CI) a one-line error; with one, the timing table.
    let o = env.prove(&["1257787", "--tune"]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(!err.contains("panicked"), "{err}");
    if o.status.success() {
        assert!(out.contains("stages per line") && out.contains("<- kept for this length"), "{out}");
    } else {
        assert!(err.contains("--tune times the GPU") && out.is_empty(), "{err}");
    }
    // The one-block lengths have no pass shape to choose, GPU or not.
    let o = env.prove(&["9689", "--tune"]);
    assert!(o.status.success() && stdout(&o).contains("nothing to tune"), "{}", stderr(&o));
    // The exponent is checked first.
    let o = env.prove(&["9", "--tune"]);
    assert!(!o.status.success() && stderr(&o).contains("not prime"), "{}", stderr(&o));
}

#[test]
fn trace_prints_the_phases_in_order_only_when_asked() {
    let env = Env::new();
    let cert = env.path("t.cbor");
    std::fs::write(env.path("key"), format!("{}\n", "11".repeat(32))).unwrap();
    let run = |trace: bool| {
        let mut c = bin("prove");
        c.args(["4423", "--engine", "cpu", "--cert"])
            .arg(&cert)
            .arg("--key")
            .arg(env.path("key"))
            .arg("--state-dir")
            .arg(env.path("state"));
        if trace {
            c.env("MERSENNE_CERT_TRACE", "1");
        } else {
            c.env_remove("MERSENNE_CERT_TRACE");
        }
        c.output().unwrap()
    };
    let quiet = run(false);
    assert!(quiet.status.success() && !stderr(&quiet).contains("trace:"), "{}", stderr(&quiet));
    let o = run(true);
    assert!(o.status.success(), "{}", stderr(&o));
    let marks: Vec<(f64, String)> = stderr(&o)
        .lines()
        .filter_map(|l| l.strip_prefix("trace: "))
        .map(|l| {
            let (ms, phase) = l.split_once(" ms  ").expect(l);
            (ms.parse().expect(l), phase.to_string())
        })
        .collect();
    let phases: Vec<&str> = marks.iter().map(|(_, p)| p.as_str()).collect();
    let expected = [
        "args parsed",
        "signing key loaded",
        "state store opened",
        "engine open",
        "run started",
        "run: final jacobi check done",
        "run finished",
        "certificate signed",
        "certificate written",
        "result printed",
        "state cleared",
        "exit",
    ];
    let mut at = 0;
    for want in expected {
        at += phases[at..]
            .iter()
            .position(|p| *p == want)
            .unwrap_or_else(|| panic!("no '{want}' after {:?}: {phases:?}", phases.get(at)));
    }
    assert!(marks.windows(2).all(|w| w[0].0 <= w[1].0), "{marks:?}");
    assert_eq!(phases.last(), Some(&"exit"));
}
