//! Verification that scales out, end to end through the binaries: the replay-points sidecar,
//! `verify --shard I/N --out PART` run as N concurrent processes and `verify --merge` with every
//! way of spoiling the parts, and `--engine auto` choosing the CPU for small work.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A certificate of M_4423 (LL) with 3 residues of its own and up to 16 replay points beside it.
fn certificate(env: &Env, name: &str) -> PathBuf {
    let cert = env.path(name);
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
    let cert = certificate(&env, "a.cert");
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
    let other = certificate(&env, "b.cert");
    let foreign = run(verify(&cert, &["--points", &format!("{}.points", other.display())]));
    assert!(!foreign.status.success());
    assert!(stderr(&foreign).contains("the points belong to certificate"), "{}", stderr(&foreign));
}

/// Run shards 0..n of `cert` as n processes at once; the part files.
fn shards(env: &Env, cert: &Path, n: usize, tag: &str) -> Vec<PathBuf> {
    let parts: Vec<PathBuf> = (0..n).map(|i| env.path(&format!("{tag}.part{i}"))).collect();
    let children: Vec<_> = parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            verify(cert, &["--shard", &format!("{i}/{n}"), "--out", part.to_str().unwrap()])
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

fn merge(cert: &Path, parts: &[PathBuf]) -> Output {
    let mut c = verify(cert, &["--merge"]);
    c.args(parts);
    run(c)
}

fn refused(cert: &Path, parts: &[PathBuf], why: &str) {
    let o = merge(cert, parts);
    assert!(!o.status.success(), "accepted: {}", stderr(&o));
    assert!(stderr(&o).contains("merge refused") && stderr(&o).contains(why), "{why}: {}", stderr(&o));
}

#[test]
fn shards_merge_only_when_they_cover_this_certificate() {
    let env = Env::new();
    let cert = certificate(&env, "a.cert");
    let parts = shards(&env, &cert, 4, "a");
    let ok = merge(&cert, &parts);
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert!(stdout(&ok).contains("100.00% replayed in 4 shards"), "{}", stdout(&ok));

    refused(&cert, &parts[..3], "segments missing");
    refused(&cert, &[&parts[..], &parts[1..2]].concat(), "covered twice");
    // A part of another certificate of the same exponent.
    let other = certificate(&env, "b.cert");
    let theirs = shards(&env, &other, 4, "b");
    refused(&cert, &[&parts[..3], &theirs[3..]].concat(), "not this one");
    // A part edited after it was written.
    let text = std::fs::read_to_string(&parts[2]).unwrap();
    let tampered = env.path("tampered");
    std::fs::write(&tampered, text.replacen("\"seconds\": ", "\"seconds\": 1", 1)).unwrap();
    refused(&cert, &[parts[0].clone(), parts[1].clone(), tampered, parts[3].clone()], "digest does not match");
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
