//! Integrity on the CPU engine: injected faults are caught (Gerbicz for PRP, spot checks or
//! Jacobi for LL) and rolled back, the check log records them, and the certificate verifies;
//! a run killed with SIGKILL at random moments resumes to the right result and the same
//! certificate chain; Ctrl-C saves and exits 130.

use mersenne_cert::cert::{Check, CheckOutcome};
use mersenne_cert::rng::SeededRng;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const P: &str = "20011";

fn prove(state: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_prove"));
    c.args([P, "--engine", "cpu", "--state-dir"]).arg(state).args(args);
    c
}

fn key(dir: &Path) -> String {
    let k = dir.join("key");
    std::fs::write(&k, format!("{}\n", "42".repeat(32))).unwrap();
    k.to_str().unwrap().to_string()
}

fn result(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn verify(cert: &Path) -> bool {
    Command::new(env!("CARGO_BIN_EXE_verify")).arg(cert).args(["--engine", "cpu"]).output().unwrap().status.success()
}

fn checks(cert: &Path) -> mersenne_cert::cert::CheckLog {
    let (body, _) = mersenne_cert::cert::open(&std::fs::read(cert).unwrap(), None).unwrap();
    body.checks
}

/// The reference result of each test, uninterrupted and fault-free.
fn reference(dir: &Path, prp: bool) -> (String, Vec<[u8; 32]>) {
    let cert = dir.join(format!("ref-{prp}.cbor"));
    let mut args = vec!["--shift", "123", "--spot", "off", "--key"];
    let k = key(dir);
    args.push(&k);
    args.extend(["--cert", cert.to_str().unwrap()]);
    if prp {
        args.push("--prp");
    }
    let j = result(&prove(&dir.join("ref-state"), &args).output().unwrap());
    let (body, _) = mersenne_cert::cert::open(&std::fs::read(&cert).unwrap(), None).unwrap();
    (j["res64"].as_str().unwrap().to_string(), body.checkpoints.iter().map(|c| c.hash).collect())
}

#[test]
fn injected_faults_are_caught_rolled_back_and_logged() {
    let dir = tempfile::tempdir().unwrap();
    let k = key(dir.path());
    for prp in [true, false] {
        let (want, _) = reference(dir.path(), prp);
        for fault in ["1", "999", "5000:3:7", "20009:0:0", "12345:200:63"] {
            let cert = dir.path().join("f.cbor");
            // PRP relies on Gerbicz alone (spot checks off); LL on spot checks covering every
            // iteration, plus Jacobi.
            let spot = if prp { "off" } else { "full" };
            let mut args = vec![
                "--inject-fault",
                fault,
                "--spot",
                spot,
                "--spot-threads",
                "1",
                "--key",
                &k,
                "--cert",
                cert.to_str().unwrap(),
            ];
            // LL: the spot checks under test, not the second engine of the default below 1M.
            args.push(if prp { "--prp" } else { "--ll-check=jacobi" });
            let j = result(&prove(&dir.path().join("s"), &args).output().unwrap());
            assert_eq!(j["res64"], want.as_str(), "prp={prp} fault {fault}");
            let log = checks(&cert);
            assert_eq!(log.summary.get("faults_injected"), Some(&1));
            assert!(
                log.summary.get("rollbacks").copied().unwrap_or(0) >= 1,
                "prp={prp} fault {fault}: {:?}",
                log.summary
            );
            let detected = if prp { "gerbicz_failures" } else { "spot_failures" };
            assert!(
                log.summary.get(detected).copied().unwrap_or(0)
                    + log.summary.get("jacobi_failures").copied().unwrap_or(0)
                    >= 1
            );
            assert!(log.events.iter().any(|e| e.outcome == CheckOutcome::Rollback));
            assert!(verify(&cert), "prp={prp} fault {fault}: certificate does not verify");
        }
    }
}

#[test]
fn kill_9_at_random_moments_then_resume() {
    let dir = tempfile::tempdir().unwrap();
    let k = key(dir.path());
    let deadline = Instant::now() + Duration::from_secs(240);
    for prp in [false, true] {
        let (want, chain) = reference(dir.path(), prp);
        let mut trials = 0;
        // 20 trials per test kind, each killed after a pseudo-random delay.
        let mut rng = SeededRng::new(0x9E37_79B9_7F4A_7C15 ^ prp as u64);
        while trials < 20 && Instant::now() < deadline {
            let state = dir.path().join(format!("kill-{prp}-{trials}"));
            let cert = dir.path().join("k.cbor");
            let mut args =
                vec!["--shift", "123", "--save-every", "0.01", "--key", &k, "--cert", cert.to_str().unwrap()];
            if prp {
                args.push("--prp");
            }
            let delay = Duration::from_millis(50 + rng.below(600));
            let mut child = prove(&state, &args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
            std::thread::sleep(delay);
            let _ = child.kill(); // SIGKILL
            let _ = child.wait();
            let j = result(&prove(&state, &args).output().unwrap());
            assert_eq!(j["res64"], want.as_str(), "trial {trials} prp={prp}");
            let (body, _) = mersenne_cert::cert::open(&std::fs::read(&cert).unwrap(), None).unwrap();
            let got: Vec<[u8; 32]> = body.checkpoints.iter().map(|c| c.hash).collect();
            assert_eq!(got, chain, "trial {trials}: resumed chain differs");
            assert!(verify(&cert));
            trials += 1;
        }
        assert!(trials >= 20, "only {trials} trials fit the time bound");
    }
}

#[test]
fn ctrl_c_even_delivered_twice_saves_and_exits_130_then_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("s");
    let child = Command::new(env!("CARGO_BIN_EXE_prove"))
        .args(["110503", "--engine", "cpu", "--spot", "off", "--state-dir"])
        .arg(&state)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let pid = child.id().to_string();
    // Twice at once, as a signal to the process group arrives (GNU timeout, a supervisor): the
    // duplicate must not turn the saving exit into an exit without saving.
    for _ in 0..2 {
        assert!(Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("run the same command again to resume"));
    assert!(o.stdout.is_empty());
    let saved = std::fs::read_dir(state.join("M110503-LL")).unwrap().count();
    assert!(saved >= 1);
    // Resume for a few iterations is refused (different parameters), with a clear message.
    let o = Command::new(env!("CARGO_BIN_EXE_prove"))
        .args(["110503", "--engine", "cpu", "--iterations", "10", "--state-dir"])
        .arg(&state)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--fresh"));
}

#[test]
fn ll_fault_is_caught_by_the_background_jacobi_check() {
    // Spot checks off: only the Jacobi check, run on its own thread at each save, can see this
    // flip (chosen because it turns (s − 2 | M_p) to +1; a flip does so about half the time).
    let dir = tempfile::tempdir().unwrap();
    let (want, _) = reference(dir.path(), false);
    let cert = dir.path().join("jacobi.cbor");
    let k = key(dir.path());
    let args = [
        "--shift",
        "123",
        "--spot",
        "off",
        "--save-every",
        "0",
        "--ll-check",
        "jacobi",
        "--inject-fault",
        "8000:0:3",
        "--key",
        &k,
        "--cert",
        cert.to_str().unwrap(),
    ];
    let r = result(&prove(&dir.path().join("state"), &args).output().unwrap());
    assert_eq!(r["res64"], want.as_str());
    let log = checks(&cert);
    assert!(log.summary.get("jacobi_failures").copied().unwrap_or(0) >= 1, "{:?}", log.summary);
    // Caught during the run (at a save), not only by the final check at iteration p − 2.
    assert!(
        log.events.iter().any(|e| e.check == Check::Jacobi && e.outcome == CheckOutcome::Fail && e.iteration < 20009),
        "{:?}",
        log.events
    );
    assert!(verify(&cert));
}

#[test]
fn unwritable_state_dir_is_a_clear_error() {
    let o = Command::new(env!("CARGO_BIN_EXE_prove"))
        .args([P, "--engine", "cpu", "--state-dir", "/proc/nope"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("state directory") && !e.contains("panicked"), "{e}");
}
