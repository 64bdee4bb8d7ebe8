//! The arithmetic as a user-visible choice, end to end on the CPU (the twin engine runs both
//! arithmetics): `prove --engine twin --arith m61m31` (or `fp64`) gives the verdict and res64 GMP gives,
//! records the arithmetic in the result line and the signed certificate, and `verify` replays
//! that certificate in the other arithmetic and with GMP; a tampered arithmetic is refused by the
//! signature; bad `--arith` use is a one-line error.

mod common;

use common::{bin, json, stderr, stdout, Env};
use mersenne_cert::cert;
use std::path::Path;
use std::process::Output;

/// `prove` with the test's key and state directory and exactly these arguments.
fn prove(env: &Env, args: &[&str]) -> Output {
    let key = env.path("key");
    if !key.exists() {
        std::fs::write(&key, format!("{}\n", "11".repeat(32))).unwrap();
    }
    bin("prove").args(args).arg("--key").arg(&key).arg("--state-dir").arg(env.path("state")).output().unwrap()
}

fn verify(cert: &Path, args: &[&str]) -> Output {
    bin("verify").arg(cert).args(args).output().unwrap()
}

#[test]
fn m61m31_certificates_replay_in_goldilocks_and_gmp() {
    certificates_replay_in_goldilocks_and_gmp("m61m31");
}

#[test]
fn fp64_certificates_replay_in_goldilocks_and_gmp() {
    certificates_replay_in_goldilocks_and_gmp("fp64");
}

/// `prove --engine twin --arith ARITH` (LL and PRP, prime and composite) agrees with GMP, records
/// its arithmetic under the signature, and verifies replayed in Goldilocks and by GMP.
fn certificates_replay_in_goldilocks_and_gmp(arith: &str) {
    // (exponent, PRP?, prime?): LL and PRP, prime and composite M_p.
    for (p, prp, prime) in [(4423u32, false, true), (4447, false, false), (4253, true, true), (4441, true, false)] {
        let env = Env::new();
        let cert_path = env.path("m.cert");
        let cert = cert_path.to_str().unwrap();
        let kind: &[&str] = if prp { &["--prp"] } else { &[] };
        let ps = p.to_string();
        let args = |engine: &'static str| -> Vec<&str> {
            let mut a = vec![ps.as_str(), "--shift", "1000", "--engine", engine];
            a.extend_from_slice(kind);
            a
        };
        let mut twin = args("twin");
        twin.extend(["--arith", arith, "--cert", cert]);
        let o = prove(&env, &twin);
        assert!(o.status.success(), "p={p}: {}", stderr(&o));
        let (j, gmp) = (json(&o), json(&prove(&env, &[args("cpu"), vec!["--fresh"]].concat())));
        assert_eq!(j["status"], if prime { "P" } else { "C" }, "p={p}");
        assert_eq!((&j["res64"], &j["res2048"]), (&gmp["res64"], &gmp["res2048"]), "p={p}");
        assert_eq!(j["mersenne-cert"]["arith"], arith, "p={p}");
        assert!(gmp["mersenne-cert"].get("arith").is_none(), "GMP has no arithmetic: {gmp}");
        // The certificate records it, under the signature (version 2).
        let bytes = std::fs::read(&cert_path).unwrap();
        let (body, _) = cert::open(&bytes, None).unwrap();
        body.validate().unwrap();
        assert_eq!(body.arith.as_deref(), Some(arith));
        assert_eq!(body.fft_length, j["fft-length"].as_u64());
        // Replayed in Goldilocks on the twin, and by GMP; the prover's arithmetic is said.
        for replay in [&["--engine", "twin", "--arith", "goldilocks"][..], &["--engine", "cpu"]] {
            let v = verify(&cert_path, replay);
            assert!(v.status.success(), "p={p} {replay:?}: {}", stderr(&v));
            assert!(stderr(&v).contains(&format!("prover's arithmetic: {arith}")), "{}", stderr(&v));
            assert!(stdout(&v).starts_with(&format!("verified: M{p} is ")), "{}", stdout(&v));
        }
        let v = verify(&cert_path, &["--engine", "twin", "--arith", "goldilocks", "--replay"]);
        assert!(stderr(&v).contains("the CPU twin in goldilocks"), "{}", stderr(&v));
        // In its own arithmetic it verifies too, with a note that this is not independent.
        let v = verify(&cert_path, &["--engine", "twin", "--arith", arith]);
        assert!(v.status.success() && stderr(&v).contains("for an independent check"), "{}", stderr(&v));
    }
}

#[test]
fn a_tampered_arithmetic_is_refused_by_the_signature() {
    let env = Env::new();
    let cert_path = env.path("t.cert");
    let o = prove(&env, &["4423", "--engine", "twin", "--arith", "m61m31", "--cert", cert_path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut bytes = std::fs::read(&cert_path).unwrap();
    let at = bytes.windows(6).position(|w| w == b"m61m31").unwrap();
    bytes[at + 5] = b'2';
    std::fs::write(&cert_path, &bytes).unwrap();
    let v = verify(&cert_path, &["--engine", "cpu"]);
    assert!(!v.status.success());
    assert!(stderr(&v).contains("signature"), "{}", stderr(&v));
}

#[test]
fn goldilocks_twin_records_its_arithmetic() {
    let env = Env::new();
    let cert_path = env.path("g.cert");
    let o = prove(&env, &["9689", "--prp", "--engine", "twin", "--cert", cert_path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Under auto the tuner's choice and why are on stderr, beside the engine's.
    assert!(stderr(&o).contains("arith auto: goldilocks n=2^"), "{}", stderr(&o));
    assert_eq!(json(&o)["mersenne-cert"]["arith"], "goldilocks");
    let v = verify(&cert_path, &["--engine", "twin", "--arith", "m61m31"]);
    assert!(v.status.success(), "{}", stderr(&v));
    assert!(stderr(&v).contains("prover's arithmetic: goldilocks"), "{}", stderr(&v));
}

#[test]
fn bad_arith_use_is_a_one_line_error() {
    let env = Env::new();
    let one_line_error = |o: &Output, what: &str| {
        assert_eq!(o.status.code(), Some(1), "{}", stderr(o));
        let e = stderr(o);
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
        assert!(e.contains(what), "{e}");
        assert!(stdout(o).is_empty());
    };
    one_line_error(&prove(&env, &["4423", "--arith", "fp32"]), "invalid value 'fp32' for '--arith");
    one_line_error(
        &prove(&env, &["4423", "--engine", "cpu", "--arith", "m61m31"]),
        "--arith m61m31 needs a transform engine",
    );
    let cert_path = env.path("c.cert");
    assert!(prove(&env, &["127", "--engine", "cpu", "--cert", cert_path.to_str().unwrap()]).status.success());
    one_line_error(&verify(&cert_path, &["--arith", "nope"]), "invalid value 'nope' for '--arith");
    one_line_error(&verify(&cert_path, &["--engine", "cpu", "--arith", "goldilocks"]), "needs a transform engine");
    // On the GPU, M61·M31 runs its own kernels (a prime's verdict), or there is no GPU here (one line).
    let o = prove(&env, &["4423", "--engine", "gpu", "--arith", "m61m31"]);
    if o.status.success() {
        let j = json(&o);
        assert_eq!((&j["status"], &j["mersenne-cert"]["arith"]), (&"P".into(), &"m61m31".into()), "{j}");
    } else {
        one_line_error(&o, "no usable CUDA GPU");
    }
}

#[test]
fn work_dir_jobs_take_the_arithmetic() {
    let env = Env::new();
    let dir = env.path("work");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("worktodo.txt"), "DoubleCheck=4423,60,1\nPRP=N/A,1,2,4447,-1,75,0\n").unwrap();
    let key = env.path("key");
    std::fs::write(&key, format!("{}\n", "11".repeat(32))).unwrap();
    let o = bin("prove")
        .arg("--work-dir")
        .arg(&dir)
        .args(["--engine", "twin", "--arith", "m61m31", "--key"])
        .arg(&key)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let results = std::fs::read_to_string(dir.join("results.json.txt")).unwrap();
    let lines: Vec<serde_json::Value> = results.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "{results}");
    for (j, (p, status)) in lines.iter().zip([(4423, "P"), (4447, "C")]) {
        assert_eq!((j["exponent"].as_u64(), j["status"].as_str()), (Some(p), Some(status)), "{j}");
        assert_eq!(j["mersenne-cert"]["arith"], "m61m31", "{j}");
    }
}
