//! PRP proofs end to end through `prove` and `verify`: proofs on by default for a full PRP
//! test, at two powers and at p ≈ 20k; the GIMPS file; --no-proof; a wrong saved point caught
//! before anything is published; a corrupted point caught on resume; tampered proofs refused;
//! kept points giving the proofs of lower powers, and `prove --proof-from-points` writing them.

mod common;

use common::{bin, json, stderr, stdout, Env};
use ed25519_dalek::SigningKey;
use md5::{Digest, Md5};
use mersenne_cert::cert;
use mersenne_cert::proof::points::disk_usage;
use mersenne_cert::proof::Proof;
use serde_bytes::ByteBuf;
use std::path::{Path, PathBuf};

/// `prove P --prp` with a certificate (and spot checks off: the proof is what is tested).
fn prove_prp(env: &Env, p: &str, cert: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![p, "--prp", "--spot", "off", "--cert", cert.to_str().unwrap()];
    args.extend_from_slice(extra);
    env.prove(&args)
}

fn verify_ok(env: &Env, cert: &Path, extra: &[&str]) -> String {
    let v = env.verify(cert, extra);
    assert!(v.status.success(), "{}", stderr(&v));
    format!("{}{}", stderr(&v), stdout(&v))
}

fn proof_bytes(cert: &Path) -> Vec<u8> {
    let (body, _) = cert::open(&std::fs::read(cert).unwrap(), None).unwrap();
    body.proof.expect("certificate has a proof").into_vec()
}

/// The power of the proof a certificate embeds.
fn cert_power(cert: &Path) -> u32 {
    mersenne_cert::proof::Proof::from_gimps_bytes(&proof_bytes(cert)).unwrap().power()
}

/// The test key of `Env::prove`.
fn test_key() -> SigningKey {
    SigningKey::from_bytes(&[0x11; 32])
}

/// Re-sign `cert` after replacing its proof bytes (what a dishonest prover could do).
fn with_proof(cert: &Path, out: &Path, proof: Vec<u8>) {
    let (mut body, _) = cert::open(&std::fs::read(cert).unwrap(), None).unwrap();
    body.proof = Some(ByteBuf::from(proof));
    std::fs::write(out, cert::seal(&body, &test_key())).unwrap();
}

#[test]
fn proofs_at_two_powers_verify_without_replay() {
    let env = Env::new();
    for power in ["3", "7"] {
        let cert = env.path(&format!("c{power}.cbor"));
        let gimps = env.path(&format!("4423-{power}.proof"));
        let o = prove_prp(&env, "4423", &cert, &["--proof-power", power, "--gimps-proof", gimps.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        let j = json(&o);
        assert_eq!(j["status"], "P");
        assert_eq!(j["proof"]["version"], 2);
        assert_eq!(j["proof"]["power"].to_string(), power);
        assert_eq!(j["proof"]["hashsize"], 64);
        let file = std::fs::read(&gimps).unwrap();
        assert_eq!(j["proof"]["md5"], hex::encode(Md5::digest(&file)));
        assert_eq!(file, proof_bytes(&cert), "the certificate embeds the GIMPS file bytes");
        assert!(stderr(&o).contains(&format!("proof: power {power}, {} bytes", file.len())), "{}", stderr(&o));
        // The points are gone with the state.
        assert!(!env.path("state").join("M4423-PRP-3").exists());

        let out = verify_ok(&env, &cert, &[]);
        assert!(out.contains(&format!("verified with 2^-{power} of the test's squarings")), "{out}");
        assert!(out.contains("replay: skipped"), "{out}");
        assert!(out.contains("M4423 is a probable prime"), "{out}");
        // Only the final residue is embedded by default (the proof replaces the replay), and a
        // replay still covers the whole test, from the start value.
        let (body, _) = cert::open(&std::fs::read(&cert).unwrap(), None).unwrap();
        let full: Vec<u64> = body.checkpoints.iter().filter(|c| c.residue.is_some()).map(|c| c.iteration).collect();
        assert_eq!(full, vec![4423], "{} checkpoints", body.checkpoints.len());
        assert!(body.checkpoints.len() > 1);
        let out = verify_ok(&env, &cert, &["--replay"]);
        assert!(out.contains("100.00% replayed"), "{out}");
        let v = bin("verify").arg("--gimps-proof").arg(&gimps).args(["--engine", "cpu"]).output().unwrap();
        assert!(v.status.success(), "{}", stderr(&v));
        assert!(stdout(&v).contains("M4423 is a probable prime (GIMPS PRP proof, power"), "{}", stdout(&v));
    }
}

#[test]
fn residue_budget_still_sets_the_replay_residues_with_a_proof() {
    let env = Env::new();
    let cert = env.path("c.cbor");
    let o = prove_prp(&env, "4423", &cert, &["--residue-budget", "1000000"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (body, _) = cert::open(&std::fs::read(&cert).unwrap(), None).unwrap();
    assert!(body.checkpoints.iter().filter(|c| c.residue.is_some()).count() > 1);
    assert!(body.proof.is_some());
}

#[test]
fn composite_and_mid_size_exponents() {
    let env = Env::new();
    // M4447 is composite: the proof shows it (B != 9).
    let cert = env.path("c4447.cbor");
    let o = prove_prp(&env, "4447", &cert, &[]);
    assert_eq!(json(&o)["status"], "C");
    assert!(verify_ok(&env, &cert, &[]).contains("M4447 is composite"));
    // p ≈ 20k at the default power (5 below 6.7M).
    let cert = env.path("c21701.cbor");
    let o = prove_prp(&env, "21701", &cert, &[]);
    let j = json(&o);
    assert_eq!((j["status"].as_str(), cert_power(&cert)), (Some("P"), 5));
    // No proof file was asked for: the line names none (PrimeNet would wait for it forever).
    assert!(j.get("proof").is_none(), "{j}");
    let out = verify_ok(&env, &cert, &[]);
    assert!(out.contains("679 squarings after the reduction"), "{out}");
}

#[test]
fn a_composite_from_a_proof_alone_is_not_verified_above_the_threshold() {
    // Issue 35: above p = 25,000 a "composite" B from the proof alone can be shifted by a prover
    // who ran the test, with far fewer than 2^40 trials: "proof-checked, not verified", exit 4;
    // --replay makes it a verification (the checkpoint chain, or for a GIMPS file B in full).
    let env = Env::new();
    let (cert, gimps) = (env.path("c25013.cbor"), env.path("25013.proof"));
    let o = prove_prp(&env, "25013", &cert, &["--gimps-proof", gimps.to_str().unwrap()]);
    assert_eq!(json(&o)["status"], "C");
    let run = |args: &[&str]| bin("verify").args(args).args(["--engine", "cpu"]).output().unwrap();
    let c = cert.to_str().unwrap();
    let g = gimps.to_str().unwrap();
    for args in [&[c][..], &["--gimps-proof", g]] {
        let v = run(args);
        assert_eq!(v.status.code(), Some(4), "{args:?}: {}", stderr(&v));
        assert!(stdout(&v).starts_with("proof-checked, not verified: "), "{}", stdout(&v));
        assert!(stdout(&v).contains("M25013 is composite") && !stdout(&v).contains("verified with"), "{}", stdout(&v));
        assert!(stderr(&v).contains("NOT VERIFIED") && stderr(&v).contains("--replay"), "{}", stderr(&v));
    }
    for args in [&[c, "--replay"][..], &["--gimps-proof", g, "--replay"]] {
        let v = run(args);
        assert!(v.status.success(), "{args:?}: {}", stderr(&v));
        assert!(stdout(&v).starts_with("verified: M25013 is composite"), "{}", stdout(&v));
    }
    // A probable prime from the proof alone stays verified (B = 9 cannot be chosen): the
    // threshold concerns composite results only; below it B is always recomputed.
    let cert = env.path("c4447.cbor");
    assert!(prove_prp(&env, "4447", &cert, &[]).status.success());
    assert!(verify_ok(&env, &cert, &[]).contains("\nverified: M4447 is composite"));
}

#[test]
fn no_proof_options_and_budget() {
    let env = Env::new();
    let cert = env.path("plain.cbor");
    let o = prove_prp(&env, "4423", &cert, &["--no-proof"]);
    assert!(json(&o).get("proof").is_none());
    let out = verify_ok(&env, &cert, &[]);
    assert!(out.contains("100.00% replayed") && !out.contains("proof"), "{out}");
    // A budget that only fits power 4 lowers the power and says so.
    let budget = disk_usage(4423, 4).to_string();
    let o = prove_prp(&env, "4423", &cert, &["--proof-power", "7", "--proof-disk-budget", &budget]);
    assert_eq!(cert_power(&cert), 4);
    assert!(json(&o).get("proof").is_none());
    assert!(stderr(&o).contains("proof power lowered from 7 to 4"), "{}", stderr(&o));
    // Refusals: no room at all, proof options without a proof, a power out of range.
    for (args, needle) in [
        (vec!["4423", "--prp", "--proof-disk-budget", "100"], "budget"),
        (vec!["4423", "--proof-power", "3"], "need a full PRP test"),
        (vec!["4423", "--prp", "--iterations", "100", "--gimps-proof", "x.proof"], "need a full PRP test"),
        (vec!["4423", "--prp", "--no-proof", "--proof-power", "3"], "cannot be used with"),
        (vec!["4423", "--prp", "--proof-power", "13"], "out of range"),
        (vec!["4423", "--prp", "--gimps-proof", "/nonexistent-dir/x.proof"], "cannot write the proof file"),
    ] {
        let o = env.prove(&args);
        assert!(!o.status.success(), "{args:?}");
        assert!(stderr(&o).contains(needle) && !stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn kept_points_give_the_lower_powers_proofs() {
    use mersenne_cert::proof::{arith::CpuArith, points::ProofStore, prove_from_store};
    let env = Env::new();
    let (cert, kept) = (env.path("c.cbor"), env.path("kept"));
    let o = prove_prp(&env, "4423", &cert, &["--proof-power", "5", "--keep-proof-points", kept.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("proof points kept in"), "{}", stderr(&o));
    assert_eq!(point_files(&kept).len(), 32);
    let top = Proof::from_gimps_bytes(&proof_bytes(&cert)).unwrap();
    let saved = ProofStore::open_saved(&kept, 4423).unwrap();
    for power in [5, 3, 1] {
        let proof = prove_from_store(&saved.at_power(power).unwrap(), &mut CpuArith).unwrap();
        assert_eq!((proof.power(), proof.b()), (power, top.b()));
        assert_eq!(power == 5, proof.middles() == top.middles());
    }
    // The directory must be new: refused before the test runs.
    let o = prove_prp(&env, "4423", &cert, &["--keep-proof-points", kept.to_str().unwrap()]);
    assert!(!o.status.success() && stderr(&o).contains("exists already"), "{}", stderr(&o));
    let o = prove_prp(&env, "4423", &cert, &["--no-proof", "--keep-proof-points", "k2"]);
    assert!(!o.status.success() && stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
}

#[test]
fn wrong_saved_point_is_caught_before_publishing() {
    let env = Env::new();
    let cert = env.path("c.cbor");
    let o = prove_prp(&env, "4423", &cert, &["--proof-power", "4", "--corrupt-proof-point", "5"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("failed its own verification") && err.contains("not published"), "{err}");
    assert!(err.contains("M4423 is a probable prime"), "the test's own result is still told: {err}");
    assert!(stdout(&o).is_empty() && !cert.exists());
}

fn point_files(dir: &Path) -> Vec<(u64, PathBuf)> {
    let mut v: Vec<(u64, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| Some((p.file_name()?.to_str()?.strip_suffix(".point")?.parse().ok()?, p)))
        .collect();
    v.sort();
    v
}

#[test]
fn points_survive_a_resume_and_corruption_is_caught() {
    let env = Env::new();
    let cert = env.path("c.cbor");
    let stop = ["--stop-after", "3000", "--save-every", "0"];
    let o = prove_prp(&env, "9689", &cert, &stop);
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let points = env.path("state").join("M9689-PRP-3").join("proof-power5");
    let saved = point_files(&points);
    assert!(!saved.is_empty());
    // Only points covered by a passed Gerbicz check are on disk: none beyond the saved state.
    let state_at: u64 =
        stderr(&o).split("saved at iteration ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(saved.iter().all(|(k, _)| *k <= state_at), "{saved:?} beyond {state_at}");
    // Resumed, the run keeps its points and the proof verifies.
    let o = prove_prp(&env, "9689", &cert, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("resumed from a saved state"));
    assert!(verify_ok(&env, &cert, &[]).contains("verified with 2^-5"));

    // Stop again, flip a byte of a saved point: the resume refuses it, naming the point.
    let o = prove_prp(&env, "9689", &cert, &stop);
    assert_eq!(o.status.code(), Some(130));
    let (k, path) = point_files(&points).into_iter().next().unwrap();
    let mut b = std::fs::read(&path).unwrap();
    b[40] ^= 0x08;
    std::fs::write(&path, b).unwrap();
    let o = prove_prp(&env, "9689", &cert, &[]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains(&format!("proof point 0 (iteration {k}) is corrupt (checksum mismatch)"))
            && err.contains("--fresh"),
        "{err}"
    );
    let o = prove_prp(&env, "9689", &cert, &["--fresh"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn tampered_proofs_are_refused_with_the_check_named() {
    let env = Env::new();
    let cert = env.path("c.cbor");
    let gimps = env.path("g.proof");
    assert!(prove_prp(&env, "4423", &cert, &["--proof-power", "4", "--gimps-proof", gimps.to_str().unwrap()])
        .status
        .success());
    let good = proof_bytes(&cert);
    let header = good.len() - 5 * 553;
    let bad = env.path("bad.cbor");
    // A flipped byte in the signed file breaks the signature.
    let mut raw = std::fs::read(&cert).unwrap();
    let n = raw.len();
    raw[n - 2000] ^= 1;
    std::fs::write(&bad, &raw).unwrap();
    let v = env.verify(&bad, &[]);
    assert!(!v.status.success());
    // Re-signed with the same key, each proof-level check has to catch it.
    for (pos, mask, needle) in [
        (header + 553 + 100, 0x01u8, "proof verification failed"), // a middle
        (header + 4 * 553 + 7, 0x40, "proof verification failed"), // the last middle
        (header + 10, 0x02, "final residue"),                      // B
        (header + 552, 0x80, "not canonical"),                     // a bit at or above p in B
        (12, 0x01, "not a well-formed GIMPS proof"),               // the header
    ] {
        let mut t = good.clone();
        t[pos] ^= mask;
        with_proof(&cert, &bad, t.clone());
        let v = env.verify(&bad, &[]);
        let err = stderr(&v);
        assert!(!v.status.success(), "byte {pos} accepted");
        assert!(
            err.contains("FAILED: proof: ") && err.contains(needle) && !err.contains("panicked"),
            "byte {pos}: {err}"
        );
        // The same bytes as a GIMPS file.
        std::fs::write(&gimps, &t).unwrap();
        let v = bin("verify").arg("--gimps-proof").arg(&gimps).args(["--engine", "cpu"]).output().unwrap();
        assert!(!v.status.success() && !stderr(&v).contains("panicked"), "gimps byte {pos}: {}", stderr(&v));
    }
    // A truncated proof, and the proof of another exponent.
    with_proof(&cert, &bad, good[..good.len() - 1].to_vec());
    assert!(stderr(&env.verify(&bad, &[])).contains("residues, only"));
    let other = env.path("other.cbor");
    assert!(prove_prp(&env, "4253", &other, &["--proof-power", "4"]).status.success());
    with_proof(&cert, &bad, proof_bytes(&other));
    assert!(stderr(&env.verify(&bad, &[])).contains("the proof is for M4253, the certificate for M4423"));
    assert_eq!(Proof::from_gimps_bytes(&good).unwrap().power(), 4);
}

#[test]
fn gimps_files_on_their_own() {
    // Header problems of the real PRPLL file are named without any arithmetic.
    let real = std::fs::read(common::fixture("proof/1257787-8.proof")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("x.proof");
    let mut t = real.clone();
    t[18] = b'3'; // VERSION=3
    std::fs::write(&f, &t).unwrap();
    let v = bin("verify").arg("--gimps-proof").arg(&f).output().unwrap();
    assert!(!v.status.success() && stderr(&v).contains("unsupported proof VERSION=3"), "{}", stderr(&v));
    let v = bin("verify").arg("--gimps-proof").arg(dir.path().join("missing.proof")).output().unwrap();
    assert!(!v.status.success() && stderr(&v).contains("cannot read"), "{}", stderr(&v));
    let v = bin("verify").output().unwrap();
    assert!(!v.status.success() && !stderr(&v).contains("panicked"));
}

#[test]
#[ignore = "4914 GMP squarings at p = 1.26M: 15-25 s on 2 shared cores"]
fn prpll_proof_verifies_via_cli() {
    let v = bin("verify")
        .arg("--gimps-proof")
        .arg(common::fixture("proof/1257787-8.proof"))
        .args(["--engine", "cpu"])
        .output()
        .unwrap();
    assert!(v.status.success(), "{}", stderr(&v));
    assert!(
        stdout(&v).contains("M1257787 is a probable prime (GIMPS PRP proof, power 8, type-1 res64 0000000000000001"),
        "{}",
        stdout(&v)
    );
    assert!(stderr(&v).contains("4914 squarings"), "{}", stderr(&v));
}

#[test]
fn proof_from_points_writes_the_proof_file_of_a_lower_power() {
    let env = Env::new();
    let (cert, kept, file) = (env.path("c.cbor"), env.path("kept"), env.path("p3.proof"));
    let o = prove_prp(&env, "4423", &cert, &["--proof-power", "5", "--keep-proof-points", kept.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let top = Proof::from_gimps_bytes(&proof_bytes(&cert)).unwrap();
    let from_points = |extra: &[&str]| {
        bin("prove").args(["4423", "--engine", "cpu", "--proof-from-points"]).arg(&kept).args(extra).output().unwrap()
    };
    let o = from_points(&["--proof-power", "3", "--gimps-proof", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("proof: power 3, ") && out.contains("(saved for a power-5 proof)"), "{out}");
    let proof = Proof::from_gimps_bytes(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!((proof.power(), proof.b()), (3, top.b()));
    let v = bin("verify").arg("--gimps-proof").arg(&file).args(["--engine", "cpu"]).output().unwrap();
    assert!(v.status.success(), "{}", stderr(&v));
    // Without --proof-power: the power the points were saved for, the run's own proof.
    let o = from_points(&["--gimps-proof", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(Proof::from_gimps_bytes(&std::fs::read(&file).unwrap()).unwrap(), top);
    // Refusals, each one line: a power above the saved one, another exponent, no output file, a test option.
    for (extra, needle) in [
        (vec!["--proof-power", "6", "--gimps-proof", file.to_str().unwrap()], "power"),
        (vec!["--gimps-proof", file.to_str().unwrap(), "--cert", "x.cbor"], "cannot be used with"),
        (vec![], "--gimps-proof"),
    ] {
        let o = from_points(&extra);
        assert_eq!(o.status.code(), Some(1), "{extra:?}");
        let err = stderr(&o);
        assert!(err.contains(needle) && err.lines().count() == 1, "{extra:?}: {err}");
    }
    let o = bin("prove")
        .args(["4447", "--engine", "cpu", "--proof-from-points"])
        .arg(&kept)
        .arg("--gimps-proof")
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    // Points of another exponent: its last point is missing, and the error names it.
    assert!(stderr(&o).contains("4447.point: No such file"), "{}", stderr(&o));
}
