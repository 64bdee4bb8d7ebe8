//! Verification that scales out, end to end through the binaries: the replay-points sidecar,
//! `verify --shard I/N --out PART` run as N concurrent processes and `verify --merge` with every
//! way of spoiling the parts (a forged part, a certificate whose embedded proof is junk or
//! belongs to no PRP test), and `--engine auto` choosing the CPU for small work.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A certificate of M_4423 (LL) at shift count `shift` with 3 residues of its own and up to 16
/// replay points beside it. Two runs at one shift with one key make the same certificate, byte
/// for byte, so the tests' "another run" takes another shift: at random shifts it was this one
/// once in 4423 runs, and then its sidecar and parts were this certificate's (CI, 2026-11-29).
fn certificate(env: &Env, name: &str, shift: u32) -> PathBuf {
    let cert = env.path(name);
    let shift = shift.to_string();
    let o = env.prove(&[
        "4423",
        "--cert",
        cert.to_str().unwrap(),
        "--checkpoint-every",
        "100",
        "--residue-budget",
        "1700",
        "--replay-points",
        "16",
        "--shift",
        &shift,
        "--fresh",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("replay points: "), "{}", stderr(&o));
    cert
}

fn verify(cert: &Path, extra: &[&str]) -> Command {
    let mut c = bin("verify");
    c.arg(cert).args(["--engine", "cpu", "--jobs", "2"]).args(extra);
    c
}

fn run(mut c: Command) -> Output {
    c.output().unwrap()
}

fn segments_replayed(o: &Output) -> usize {
    let e = stderr(o);
    let line = e.lines().find(|l| l.starts_with("replay: ok")).unwrap_or_else(|| panic!("{e}"));
    line.split(" in ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap()
}

#[test]
fn sidecar_adds_segments_and_is_bound_to_its_certificate() {
    let env = Env::new();
    let cert = certificate(&env, "a.cert", 1234);
    let points = PathBuf::from(format!("{}.points", cert.display()));
    assert!(points.exists());
    let with = run(verify(&cert, &[]));
    assert!(with.status.success(), "{}", stderr(&with));
    assert!(segments_replayed(&with) >= 12, "{}", stderr(&with));
    // Without the sidecar: only the certificate's own residues.
    let moved = env.path("elsewhere.points");
    std::fs::rename(&points, &moved).unwrap();
    let without = run(verify(&cert, &[]));
    assert!(without.status.success(), "{}", stderr(&without));
    assert!(segments_replayed(&without) <= 4, "{}", stderr(&without));
    // Found by --points.
    let by_flag = run(verify(&cert, &["--points", moved.to_str().unwrap()]));
    assert_eq!(segments_replayed(&by_flag), segments_replayed(&with));

    // A damaged sidecar: refused when named, ignored with a note when only found beside.
    let mut bytes = std::fs::read(&moved).unwrap();
    let n = bytes.len();
    bytes[n - 10] ^= 1;
    std::fs::write(&points, &bytes).unwrap();
    let named = run(verify(&cert, &["--points", points.to_str().unwrap()]));
    assert!(!named.status.success());
    assert!(stderr(&named).contains("does not match the certificate's checkpoint hash"), "{}", stderr(&named));
    let beside = run(verify(&cert, &[]));
    assert!(beside.status.success(), "{}", stderr(&beside));
    assert!(stderr(&beside).contains("note: ignoring"), "{}", stderr(&beside));

    // Another certificate's sidecar (the same exponent, another run).
    let other = certificate(&env, "b.cert", 3210);
    let foreign = run(verify(&cert, &["--points", &format!("{}.points", other.display())]));
    assert!(!foreign.status.success());
    assert!(stderr(&foreign).contains("the points belong to certificate"), "{}", stderr(&foreign));
}

/// The run's shard key, made by `verify --new-shard-key` on first use.
fn shard_key(env: &Env) -> String {
    let key = env.path("shard.key");
    if !key.exists() {
        let o = bin("verify").arg("--new-shard-key").arg(&key).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    key.to_str().unwrap().to_string()
}

/// Run shards 0..n of `cert` as n processes at once; the part files.
fn shards(env: &Env, cert: &Path, n: usize, tag: &str) -> Vec<PathBuf> {
    let key = shard_key(env);
    let parts: Vec<PathBuf> = (0..n).map(|i| env.path(&format!("{tag}.part{i}"))).collect();
    let children: Vec<_> = parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            verify(cert, &["--shard", &format!("{i}/{n}"), "--out", part.to_str().unwrap(), "--shard-key", &key])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stdout(&o).contains("segments matched"), "{}", stdout(&o));
    }
    parts
}

fn merge(env: &Env, cert: &Path, parts: &[PathBuf]) -> Output {
    let mut c = verify(cert, &["--shard-key", &shard_key(env), "--merge"]);
    c.args(parts);
    run(c)
}

fn refused(env: &Env, cert: &Path, parts: &[PathBuf], why: &str) {
    let o = merge(env, cert, parts);
    assert!(!o.status.success(), "accepted: {}", stderr(&o));
    assert!(stderr(&o).contains("merge refused") && stderr(&o).contains(why), "{why}: {}", stderr(&o));
}

#[test]
fn shards_merge_only_when_they_cover_this_certificate() {
    let env = Env::new();
    let cert = certificate(&env, "a.cert", 1234);
    let parts = shards(&env, &cert, 4, "a");
    let ok = merge(&env, &cert, &parts);
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert!(stdout(&ok).contains("100.00% replayed in 4 shards"), "{}", stdout(&ok));

    refused(&env, &cert, &parts[..3], "segments missing");
    refused(&env, &cert, &[&parts[..], &parts[1..2]].concat(), "covered twice");
    // A part of another certificate of the same exponent.
    let other = certificate(&env, "b.cert", 3210);
    let theirs = shards(&env, &other, 4, "b");
    refused(&env, &cert, &[&parts[..3], &theirs[3..]].concat(), "not this one");
    // A part edited after it was written.
    let text = std::fs::read_to_string(&parts[2]).unwrap();
    let tampered = env.path("tampered");
    std::fs::write(&tampered, text.replacen("\"seconds\": ", "\"seconds\": 1", 1)).unwrap();
    refused(&env, &cert, &[parts[0].clone(), parts[1].clone(), tampered, parts[3].clone()], "MAC does not match");
    // Issue 35, item 4: a part made with any other key (a forger has not this run's) is refused.
    let other_env = Env::new();
    let foreign = shards(&other_env, &cert, 4, "f");
    refused(&env, &cert, &[&parts[..3], &foreign[3..]].concat(), "made without this run's shard key");
    // Without the key, neither step runs; an existing key file is never replaced.
    let o = run(verify(&cert, &["--merge", parts[0].to_str().unwrap()]));
    assert!(!o.status.success() && stderr(&o).contains("--new-shard-key"), "{}", stderr(&o));
    let o = bin("verify").args(["--new-shard-key", &shard_key(&env)]).output().unwrap();
    assert!(!o.status.success() && stderr(&o).contains("never replaced"), "{}", stderr(&o));
    let key_text = std::fs::read_to_string(shard_key(&env)).unwrap();
    assert_eq!(key_text.len(), 65);
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(shard_key(&env)).unwrap().permissions().mode() & 0o777, 0o600);
    // Bad slices are refused before any work.
    for bad in ["4/4", "x/2"] {
        let o = run(verify(&cert, &["--shard", bad, "--out", env.path("x").to_str().unwrap()]));
        assert!(!o.status.success() && stderr(&o).contains("is not I/N"), "{}", stderr(&o));
    }
    let o = run(verify(&cert, &["--shard", "0/2"]));
    assert!(!o.status.success() && stderr(&o).contains("--out"), "{}", stderr(&o));
}

#[test]
fn auto_runs_small_work_on_the_cpu() {
    let env = Env::new();
    let key = env.path("key");
    std::fs::write(&key, format!("{}\n", "11".repeat(32))).unwrap();
    let o = bin("prove")
        .args(["521", "--key", key.to_str().unwrap(), "--state-dir", env.path("state").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("engine auto: the CPU (GMP), it finishes first"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("no GPU engine"), "CUDA was looked for: {}", stderr(&o));
}

/// `prove 4423` as [`certificate`] does, into `env`'s state directory, with `replay` replay points
/// and any `extra` arguments.
fn prove_points(env: &Env, replay: &str, extra: &[&str]) -> Output {
    let cert = env.path("r.cert");
    let mut args = vec!["4423", "--cert", cert.to_str().unwrap(), "--checkpoint-every", "100"];
    args.extend(["--residue-budget", "1700", "--replay-points", replay]);
    args.extend(extra);
    env.prove(&args)
}

#[test]
fn replay_points_live_outside_the_saved_state_and_survive_a_kill() {
    // Stopped at 2500: the state's size does not depend on the replay points it has made.
    let (with, without) = (Env::new(), Env::new());
    let o = prove_points(&with, "16", &["--stop-after", "2500"]);
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert_eq!(prove_points(&without, "0", &["--stop-after", "2500"]).status.code(), Some(130));
    let test_dir = |env: &Env| env.path("state").join("M4423-LL");
    let size = |env: &Env| std::fs::metadata(test_dir(env).join("state.cbor")).unwrap().len();
    let replay = test_dir(&with).join("replay");
    let made = std::fs::read_dir(&replay).unwrap().count();
    // Points every 3rd checkpoint (300, 600, ...) but 1500, which the certificate holds.
    assert_eq!(made, 7, "points up to 2400");
    assert!(size(&with) < size(&without) + 553, "{} vs {}: one residue is 553 bytes", size(&with), size(&without));

    // One point damaged on disk, and a stale file at a point the run has not reached yet (as a
    // run killed after writing it and before its next save leaves one).
    let p600 = replay.join("600.res");
    let mut bytes = std::fs::read(&p600).unwrap();
    bytes[40] ^= 4;
    std::fs::write(&p600, bytes).unwrap();
    std::fs::copy(replay.join("2400.res"), replay.join("2700.res")).unwrap();
    let o = prove_points(&with, "16", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("resumed from a saved state at iteration 2500"), "{e}");
    assert!(e.contains("replay point at iteration 600 left out of the sidecar"), "{e}");
    assert!(e.contains("replay points: 11 residues"), "{e}");
    assert!(!test_dir(&with).exists(), "the state directory goes with the finished test");
    let left: Vec<_> = std::fs::read_dir(with.path("state")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "the lock file goes too: {left:?}");
    let v = run(verify(&with.path("r.cert"), &[]));
    assert!(v.status.success(), "{}", stderr(&v));
    assert!(segments_replayed(&v) >= 11, "{}", stderr(&v));
}

/// Issue 35, item 5: the shard and merge path checks the embedded proof as plain `verify` does:
/// a PRP certificate whose proof is junk, or an LL certificate carrying a PRP proof, is refused.
#[test]
fn shards_and_merge_check_the_embedded_proof() {
    use ed25519_dalek::SigningKey;
    use mersenne_cert::cert;
    use serde_bytes::ByteBuf;
    let env = Env::new();
    let prp = env.path("prp.cert");
    let o = env.prove(&["4423", "--prp", "--cert", prp.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ll = env.path("ll.cert");
    let o = env.prove(&["4423", "--cert", ll.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (prp_body, _) = cert::open(&std::fs::read(&prp).unwrap(), None).unwrap();
    let (mut ll_body, _) = cert::open(&std::fs::read(&ll).unwrap(), None).unwrap();
    let mut junk = prp_body.clone();
    junk.proof = Some(ByteBuf::from(b"this is not a proof".to_vec()));
    ll_body.proof = prp_body.proof.clone();
    let forger = SigningKey::from_bytes(&[0x22; 32]);
    for (name, body, why) in [
        ("junk.cert", junk, "not a well-formed GIMPS proof"),
        ("llp.cert", ll_body, "a proof belongs only to a full PRP test"),
    ] {
        body.validate().unwrap();
        let path = env.path(name);
        std::fs::write(&path, cert::seal(&body, &forger)).unwrap();
        let plain = run(verify(&path, &[]));
        assert!(!plain.status.success() && stderr(&plain).contains(why), "{}", stderr(&plain));
        let part = env.path(&format!("{name}.part"));
        let o =
            run(verify(&path, &["--shard", "0/1", "--out", part.to_str().unwrap(), "--shard-key", &shard_key(&env)]));
        assert!(!o.status.success() && stderr(&o).contains(why), "{}", stderr(&o));
        assert!(!part.exists());
        let o = merge(&env, &path, &[part]);
        assert!(!o.status.success() && stderr(&o).contains(why), "{}", stderr(&o));
    }
}
