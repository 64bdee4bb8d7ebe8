//! Issue 26's hostile-user tests of the binaries: outputs that are not regular files or cannot
//! be written are refused before the test starts, stale temporaries are cleaned, a full disk
//! leaves no torn result line, a full stdout is an error and not a panic, special files and
//! FIFOs are never read or waited on, thread counts are clamped, options that would do nothing
//! are refused, argument errors are one line with exit 1, and `--sample` always replays the
//! segment that ends at the final residue. Issue 35's robustness items follow (each test names
//! its item): bounded inputs, bounded knobs, small exponents, outputs that alias, state files of
//! the wrong type, a lock whose holder is dying.

mod common;

use common::{bin, json, stderr, stdout, Env};
use mersenne_cert::cert::{self, Outcome};
use mersenne_cert::residue::Residue;
use serde_bytes::ByteBuf;
use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn mkfifo(path: &Path) -> bool {
    Command::new("mkfifo").arg(path).status().is_ok_and(|s| s.success())
}

/// A refusal before the test: non-zero exit, the needle in one line on stderr, no result line.
fn refused_early(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains(needle), "wanted '{needle}': {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(stdout(o).is_empty(), "the test ran: {}", stdout(o));
}

/// Run `cmd`, failing the test if it does not finish within `limit` (a FIFO it waits on).
fn output_within(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            panic!("still running after {limit:?}: blocked");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn special_directory_and_missing_outputs_are_refused_before_the_test() {
    let env = Env::new();
    let dir = env.path("a-dir");
    fs::create_dir(&dir).unwrap();
    let target = env.path("target");
    fs::write(&target, b"keep me").unwrap();
    let link = env.path("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let fifo = env.path("fifo");
    let has_fifo = mkfifo(&fifo);
    let missing = env.path("missing/x");
    let s = |p: &Path| p.to_str().unwrap().to_string();

    let mut cases = vec![
        (vec!["89".into(), "--cert".into(), s(&dir)], "a directory"),
        (vec!["89".into(), "--cert".into(), s(&link)], "symbolic link"),
        (vec!["89".into(), "--cert".into(), s(&missing)], "cannot write the certificate"),
        (vec!["89".into(), "--json".into(), s(&dir)], "cannot append"),
        (vec!["89".into(), "--json".into(), s(&missing)], "cannot append"),
        (vec!["89".into(), "--prp".into(), "--gimps-proof".into(), s(&dir)], "a directory"),
        (vec!["89".into(), "--prp".into(), "--keep-proof-points".into(), s(&missing)], "--keep-proof-points"),
        (vec!["89".into(), "--prp".into(), "--keep-proof-points".into(), s(&dir)], "exists already"),
    ];
    if has_fifo {
        cases.push((vec!["89".into(), "--cert".into(), s(&fifo)], "a FIFO"));
        cases.push((vec!["89".into(), "--json".into(), s(&fifo)], "a FIFO"));
    }
    // A device node of our own (root only): never replaced by a regular file.
    let dev = env.path("null-device");
    let has_dev = Command::new("mknod").arg(&dev).args(["c", "1", "3"]).status().is_ok_and(|s| s.success());
    if has_dev {
        cases.push((vec!["89".into(), "--cert".into(), s(&dev)], "a device"));
        cases.push((vec!["89".into(), "--prp".into(), "--gimps-proof".into(), s(&dev)], "a device"));
    } else {
        eprintln!("note: mknod is not permitted here; the device-node case is skipped");
    }
    for (args, needle) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused_early(&env.prove(&args), needle);
    }
    assert_eq!(fs::read(&target).unwrap(), b"keep me");
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    if has_dev {
        use std::os::unix::fs::FileTypeExt;
        assert!(fs::symlink_metadata(&dev).unwrap().file_type().is_char_device());
    }
    assert!(!env.path("missing").exists());
}

#[test]
fn stale_temporaries_are_cleaned_and_stdout_errors_do_not_panic() {
    let env = Env::new();
    let cert = env.path("c.cert");
    // What a run killed during its write leaves (pid 4194305 is above Linux's pid limit), and
    // a user's files of similar names, which are not ours and stay (issue 35).
    let stale = env.path("c.cert.tmp.mersenne-cert.4194305.0123456789abcdef");
    fs::write(&stale, b"half").unwrap();
    let users = [env.path("c.cert.tmp999999"), env.path("c.cert.tmp4194305")];
    for f in &users {
        fs::write(f, b"notes").unwrap();
    }
    let o = env.prove(&["127", "--cert", cert.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stale.exists(), "{}", stderr(&o));
    assert!(stderr(&o).contains("removed 1 temporary file"), "{}", stderr(&o));
    for f in &users {
        assert_eq!(fs::read(f).unwrap(), b"notes", "{}", f.display());
    }

    if !Path::new("/dev/full").exists() {
        eprintln!("note: no /dev/full; the full-stdout case is skipped");
        return;
    }
    let full = || fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let key = env.path("key");
    let o = bin("prove")
        .args(["127", "--engine", "cpu", "--key"])
        .arg(&key)
        .arg("--state-dir")
        .arg(env.path("state"))
        .stdout(full())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("standard output") && !stderr(&o).contains("panicked"), "{}", stderr(&o));
    let o = bin("verify").arg(&cert).args(["--engine", "cpu"]).stdout(full()).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("standard output") && !stderr(&o).contains("panicked"), "{}", stderr(&o));
}

#[test]
fn special_inputs_and_fifo_keys_are_refused_without_blocking() {
    let env = Env::new();
    let mut cmd = bin("verify");
    cmd.args(["/dev/zero", "--engine", "cpu"]);
    let o = output_within(cmd, Duration::from_secs(20));
    refused_early(&o, "not a regular file");
    let mut cmd = bin("verify");
    cmd.args(["--gimps-proof", "/dev/zero"]);
    refused_early(&output_within(cmd, Duration::from_secs(20)), "not a regular file");
    let fifo = env.path("fifo");
    if !mkfifo(&fifo) {
        eprintln!("note: mkfifo failed; the FIFO cases are skipped");
        return;
    }
    let mut cmd = bin("verify");
    cmd.arg(&fifo).args(["--engine", "cpu"]);
    refused_early(&output_within(cmd, Duration::from_secs(20)), "a FIFO");
    let mut cmd = bin("prove");
    cmd.args(["89", "--engine", "cpu", "--cert"]).arg(env.path("c.cert")).arg("--key").arg(&fifo);
    cmd.arg("--state-dir").arg(env.path("state"));
    refused_early(&output_within(cmd, Duration::from_secs(20)), "a FIFO");
}

#[test]
fn knobs_are_clamped_or_refused_and_argument_errors_are_one_line() {
    let env = Env::new();
    let cert = env.path("c.cert");
    let o = env.prove(&["127", "--spot-threads", "100000", "--cert", cert.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("note: --spot-threads 100000 is more than"), "{}", stderr(&o));
    // The key of Env::prove is world-readable: warned about, as ssh does; not after chmod 600.
    assert!(stderr(&o).contains("readable by other users"), "{}", stderr(&o));
    fs::set_permissions(env.path("key"), std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let o = env.prove(&["127", "--cert", cert.to_str().unwrap()]);
    assert!(!stderr(&o).contains("readable by other users"), "{}", stderr(&o));
    let v = env.verify(&cert, &["--jobs", "10000"]);
    assert!(v.status.success(), "{}", stderr(&v));
    assert!(stderr(&v).contains("note: --jobs 10000 is more than"), "{}", stderr(&v));
    refused_early(&env.verify(&cert, &["--jobs", "0"]), "--jobs must be at least 1");
    refused_early(&env.prove(&["127", "--spot-threads", "0"]), "--spot-threads must be at least 1");
    refused_early(&env.prove(&["127", "--inject-fault", "0"]), "--inject-fault 0");
    refused_early(&env.prove(&["127", "--inject-fault", "126"]), "--inject-fault 126");
    refused_early(&env.prove(&["127", "--prp", "--inject-fault", "128"]), "--inject-fault 128");
    let o = env.prove(&["2", "--cert", cert.to_str().unwrap()]);
    refused_early(&o, "no certificate");
    assert!(!stderr(&o).contains("PRP"), "{}", stderr(&o));
    // Each cause is said once (a key error printed its "(os error N)" cause twice).
    let o = bin("prove")
        .args(["127", "--engine", "cpu", "--cert", cert.to_str().unwrap(), "--key", "/nonexistent/key"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(err.matches("os error").count(), 1, "{err}");
    // verify --gimps-proof takes none of the certificate's options (--replay it takes: B in full).
    for extra in [&["--sample", "2"][..], &["--jobs", "0"], &["--trust", "00"]] {
        let o = bin("verify").args(["--gimps-proof", "x.proof"]).args(extra).output().unwrap();
        refused_early(&o, "cannot be used with");
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
    // Argument errors: exit 1 and one line, as the README says.
    for (b, args) in [("prove", &["--frob"][..]), ("prove", &[]), ("verify", &["a", "--sample", "x"])] {
        let o = bin(b).args(args).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{b} {args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{b} {args:?}: {}", stderr(&o));
    }
    assert!(bin("prove").arg("--help").output().unwrap().status.success());
}

#[test]
fn sample_always_replays_the_final_segment() {
    let env = Env::new();
    let cert = env.path("c.cert");
    let o = env.prove(&["9697", "--cert", cert.to_str().unwrap()]);
    assert_eq!(json(&o)["status"], "C");
    // The forgery: final residue 0, "prime", re-signed by the forger's own key.
    let (mut body, _) = cert::open(&fs::read(&cert).unwrap(), None).unwrap();
    let zero = Residue::from_u64(9697, 0);
    let last = body.checkpoints.last_mut().unwrap();
    last.hash = zero.hash();
    last.residue = Some(ByteBuf::from(zero.to_bytes()));
    body.result = Outcome::from_final(body.kind, body.iterations, &zero).unwrap();
    body.validate().unwrap();
    let forged = env.path("forged.cert");
    fs::write(&forged, cert::seal(&body, &ed25519_dalek::SigningKey::from_bytes(&[0x22; 32]))).unwrap();
    for _ in 0..5 {
        let v = env.verify(&forged, &["--sample", "1"]);
        assert!(!v.status.success(), "{}", stdout(&v));
        assert!(stderr(&v).contains("replay mismatch at iteration 9695"), "{}", stderr(&v));
    }
    let v = env.verify(&forged, &["--sample", "0"]);
    refused_early(&v, "--sample 0 replays nothing");
    // The honest certificate: K ≥ segments is a full replay and says so; K = 1 is a spot check.
    let v = env.verify(&cert, &["--sample", "100000"]);
    assert!(v.status.success(), "{}", stderr(&v));
    assert!(stderr(&v).contains("a full replay") && !stderr(&v).contains("unchecked"), "{}", stderr(&v));
    assert!(stdout(&v).contains("100.00% replayed"), "{}", stdout(&v));
    let v = env.verify(&cert, &["--sample", "1"]);
    assert!(stderr(&v).contains("SPOT CHECK ONLY: replayed 1 of"), "{}", stderr(&v));
    assert_eq!(v.status.code(), Some(3), "{}", stderr(&v));
    assert!(stdout(&v).starts_with("spot-checked, not verified: "), "{}", stdout(&v));
}

/// `--json` on a full file system: the error names the file and the file keeps only whole lines.
/// Needs a tiny tmpfs (root); skipped with a note where it cannot be mounted.
#[test]
fn full_disk_leaves_no_torn_json_line() {
    let env = Env::new();
    let mnt = env.path("tiny");
    fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(&mnt)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("note: cannot mount a tmpfs here (not root?); the full-disk test is skipped");
        return;
    }
    let results = mnt.join("results.txt");
    // One line that fills its page but for 100 bytes, then fill the rest of the file system.
    let first = format!("{}\n", "x".repeat(4096 - 101));
    fs::write(&results, &first).unwrap();
    let mut filler = fs::File::create(mnt.join("filler")).unwrap();
    let page = vec![0u8; 4096];
    while std::io::Write::write_all(&mut filler, &page).is_ok() {}
    drop(filler);
    let o = env.prove(&["127", "--json", results.to_str().unwrap()]);
    let after = fs::read_to_string(&results).unwrap();
    let _ = Command::new("umount").arg(&mnt).status();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains(results.to_str().unwrap()), "the file is named: {}", stderr(&o));
    assert_eq!(after, first, "only whole lines");
}

/// Issue 35 item 6: `verify --points` takes a regular file of bounded size; /dev/zero and a FIFO
/// are refused at once, and a FIFO sidecar picked up by itself is ignored with a note.
#[test]
fn replay_points_must_be_a_bounded_regular_file() {
    let env = Env::new();
    let cert = env.path("c.cert");
    let o = env.prove(&["9689", "--cert", cert.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut cmd = bin("verify");
    cmd.arg(&cert).args(["--engine", "cpu", "--points", "/dev/zero"]);
    refused_early(&output_within(cmd, Duration::from_secs(20)), "a device");
    // A regular file longer than any sidecar of this certificate is not read.
    let big = env.path("big.points");
    fs::File::create(&big).unwrap().set_len(1 << 30).unwrap();
    let mut cmd = bin("verify");
    cmd.arg(&cert).args(["--engine", "cpu", "--points"]).arg(&big);
    refused_early(&output_within(cmd, Duration::from_secs(20)), "bytes it can have");
    let fifo = env.path("fifo");
    if !mkfifo(&fifo) {
        eprintln!("note: mkfifo failed; the FIFO cases are skipped");
        return;
    }
    let mut cmd = bin("verify");
    cmd.arg(&cert).args(["--engine", "cpu", "--points"]).arg(&fifo);
    refused_early(&output_within(cmd, Duration::from_secs(20)), "a FIFO");
    let sidecar = env.path("c.cert.points");
    let _ = fs::remove_file(&sidecar);
    assert!(mkfifo(&sidecar));
    let mut cmd = bin("verify");
    cmd.arg(&cert).args(["--engine", "cpu"]);
    let v = output_within(cmd, Duration::from_secs(60));
    assert!(v.status.success(), "{}", stderr(&v));
    assert!(stderr(&v).contains("ignoring") && stderr(&v).contains("a FIFO"), "{}", stderr(&v));
}

/// Issue 35 items 7 and 8: --gerbicz-block is bounded (by p, and for the work loop by the
/// largest exponent), and seconds too large for a duration are a clear error, not a panic.
#[test]
fn long_blocks_and_huge_seconds_are_refused() {
    let env = Env::new();
    refused_early(&env.prove(&["9689", "--prp", "--gerbicz-block", "1000000"]), "at most 1000 for M9689");
    refused_early(&env.prove(&["9689", "--save-every", "1e20"]), "--save-every 100000000000000000000 is too long");
    let work = env.path("work");
    fs::create_dir(&work).unwrap();
    for extra in [&["--wait", "1e20"][..], &["--gerbicz-block", "18446744073709551615"], &["--save-every", "1e300"]] {
        let o =
            bin("prove").arg("--work-dir").arg(&work).arg("--key").arg(env.path("key")).args(extra).output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {err}");
        assert!(err.contains("too long") && !err.contains("panicked"), "{extra:?}: {err}");
    }
}

/// Issue 35 item 7: SIGTERM stops a PRP run with a saved state (exit 130), within two Gerbicz
/// blocks (here about a second of CPU; the limit allows for a loaded machine).
#[test]
fn sigterm_saves_and_stops_a_prp_run() {
    let env = Env::new();
    fs::write(env.path("key"), format!("{}\n", "11".repeat(32))).unwrap();
    let mut child = bin("prove")
        .args(["86243", "--prp", "--no-proof", "--engine", "cpu", "--spot", "off", "--gerbicz-block", "1000"])
        .args(["--save-every", "0", "--key"])
        .arg(env.path("key"))
        .arg("--state-dir")
        .arg(env.path("state"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A first save: the run (and its signal handler) is under way.
    let saved = env.path("state/M86243-PRP-3/state.cbor");
    let start = Instant::now();
    while !saved.exists() {
        assert!(start.elapsed() < Duration::from_secs(60), "no state saved within 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("SIGTERM was not honoured within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(stderr(&o).contains("saved at iteration"), "{}", stderr(&o));
}

/// Issue 35 item 9: M3, M5, M7 (LL), M3 (PRP) and M2 under the default engine, and verify of
/// their certificates under its default engine.
#[test]
fn the_smallest_exponents_run_and_verify_under_the_default_engine() {
    let env = Env::new();
    let key = env.path("key");
    fs::write(&key, format!("{}\n", "11".repeat(32))).unwrap();
    let prove = |args: &[&str]| {
        bin("prove").args(args).arg("--key").arg(&key).arg("--state-dir").arg(env.path("state")).output().unwrap()
    };
    for (p, prp) in [("3", false), ("5", false), ("7", false), ("3", true)] {
        let cert = env.path(&format!("m{p}-{prp}.cert"));
        let mut args = vec![p, "--cert", cert.to_str().unwrap()];
        if prp {
            args.push("--prp");
        }
        let o = prove(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert_eq!(json(&o)["status"], "P", "{args:?}");
        let v = bin("verify").arg(&cert).output().unwrap();
        assert!(v.status.success(), "{args:?}: {}", stderr(&v));
        assert!(stdout(&v).contains(&format!("M{p} is")), "{}", stdout(&v));
    }
    let o = prove(&["2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json(&o)["status"], "P");
}

/// Issue 35 item 10: outputs that are one file, or the signing key, or lie in the state
/// directory, are refused before the test, and nothing is touched.
#[test]
fn outputs_that_alias_each_other_or_our_files_are_refused() {
    let env = Env::new();
    let f = env.path("out");
    let fs_ = f.to_str().unwrap();
    let key = env.path("key");
    fs::write(&key, format!("{}\n", "11".repeat(32))).unwrap();
    let keys = key.to_str().unwrap();
    let same = env.path("sub/../out");
    fs::create_dir(env.path("sub")).unwrap();
    let points = format!("{fs_}.points");
    fs::create_dir_all(env.path("state/M89-LL")).unwrap();
    let in_state = env.path("state/M89-LL/c.cert");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["89", "--cert", keys], "is the same file as the signing key"),
        (vec!["89", "--json", keys], "is the same file as the signing key"),
        (vec!["89", "--cert", fs_, "--json", fs_], "--json"),
        (vec!["89", "--cert", fs_, "--json", same.to_str().unwrap()], "is the same file as --cert"),
        (vec!["89", "--cert", fs_, "--json", &points], "is the same file as the certificate's replay points"),
        (vec!["89", "--prp", "--cert", fs_, "--gimps-proof", fs_], "is the same file as --cert"),
        (vec!["89", "--cert", in_state.to_str().unwrap()], "deleted when the test ends"),
    ];
    fs::write(&f, b"mine").unwrap();
    for (args, needle) in cases {
        refused_early(&env.prove(&args), needle);
    }
    assert_eq!(fs::read(&f).unwrap(), b"mine");
    assert_eq!(fs::read_to_string(&key).unwrap(), format!("{}\n", "11".repeat(32)));
    // The default key, found through XDG_CONFIG_HOME.
    let config = env.path("config");
    let default_key = config.join("mersenne-cert/signing.key");
    fs::create_dir_all(default_key.parent().unwrap()).unwrap();
    fs::write(&default_key, format!("{}\n", "22".repeat(32))).unwrap();
    let o = bin("prove")
        .args(["89", "--engine", "cpu", "--cert"])
        .arg(&default_key)
        .arg("--state-dir")
        .arg(env.path("state"))
        .env("XDG_CONFIG_HOME", &config)
        .output()
        .unwrap();
    refused_early(&o, "the signing key");
    assert_eq!(fs::read_to_string(&default_key).unwrap(), format!("{}\n", "22".repeat(32)));
}

/// Issue 35 item 12: a result line appended to a file whose last line lacks its newline starts
/// a line of its own.
#[test]
fn json_lines_are_not_glued_to_an_unterminated_last_line() {
    let env = Env::new();
    let j = env.path("results.txt");
    fs::write(&j, b"a line without its newline").unwrap();
    let o = env.prove(&["127", "--json", j.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = fs::read_to_string(&j).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0], "a line without its newline");
    assert_eq!(serde_json::from_str::<serde_json::Value>(lines[1]).unwrap()["exponent"], 127);
}

/// Issue 35 items 11 and 14: state files of the wrong type are named with their path and role,
/// and proof or replay points that are FIFOs or links to devices are refused, never waited on.
#[test]
fn state_files_of_the_wrong_type_are_refused_without_blocking() {
    let env = Env::new();
    let state = env.path("state");
    // state.cbor a directory: the error names that file and its role.
    let cur = state.join("M127-LL/state.cbor");
    fs::create_dir_all(&cur).unwrap();
    let o = env.prove(&["127"]);
    refused_early(&o, &format!("saved state {}: it is a directory", cur.display()));
    fs::remove_dir(&cur).unwrap();
    if mkfifo(&state.join("M127-LL.lock")) {
        refused_early(&output_within_env(&env, &["127"]), "lock file");
        fs::remove_file(state.join("M127-LL.lock")).unwrap();
    }
    // A PRP run stopped with its proof points saved; its first point replaced by a FIFO, then
    // by a link to /dev/zero: the resume says so at once.
    let o = env.prove(&["9689", "--prp", "--stop-after", "3000", "--save-every", "0"]);
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let dir = fs::read_dir(state.join("M9689-PRP-3"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with("proof-power"))
        .expect("a proof-points directory");
    let mut points: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    points.sort_by_key(|p| p.file_stem().unwrap().to_str().unwrap().parse::<u64>().unwrap());
    let first = points[0].clone();
    fs::remove_file(&first).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &first).unwrap();
    let o = output_within_env(&env, &["9689", "--prp", "--stop-after", "3000", "--save-every", "0"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("a device"), "{}", stderr(&o));
    fs::remove_file(&first).unwrap();
    if mkfifo(&first) {
        let o = output_within_env(&env, &["9689", "--prp", "--stop-after", "3000", "--save-every", "0"]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("a FIFO"), "{}", stderr(&o));
    }
    // LL replay points: a FIFO one is left out of the sidecar with a warning.
    let cert = env.path("c.cert");
    // (A small residue budget: the certificate holds few full residues, the rest are points.)
    let args = ["9689", "--cert", cert.to_str().unwrap(), "--residue-budget", "4096"];
    let o = env.prove(&[&args[..], &["--stop-after", "5000", "--save-every", "0"]].concat());
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let replay = state.join("M9689-LL/replay");
    // The earliest point: the resume (from a later save) does not write it again.
    let point = fs::read_dir(&replay)
        .unwrap()
        .map(|e| e.unwrap().path())
        .min_by_key(|p| p.file_stem().unwrap().to_str().unwrap().parse::<u64>().unwrap())
        .unwrap();
    fs::remove_file(&point).unwrap();
    if mkfifo(&point) {
        let o = output_within_env(&env, &args);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains("left out of the sidecar") && stderr(&o).contains("a FIFO"), "{}", stderr(&o));
    }
}

/// `env.prove(args)`, failing the test if it blocks for 60 s.
fn output_within_env(env: &Env, args: &[&str]) -> Output {
    let mut cmd = bin("prove");
    cmd.args(args).arg("--key").arg(env.path("key")).args(["--engine", "cpu", "--state-dir"]).arg(env.path("state"));
    output_within(cmd, Duration::from_secs(60))
}

/// Issue 35 item 15: a prove killed with SIGKILL and restarted at once does not find its own
/// dying self holding the lock.
#[test]
fn a_restart_right_after_sigkill_takes_the_lock() {
    let env = Env::new();
    fs::write(env.path("key"), format!("{}\n", "11".repeat(32))).unwrap();
    let args = ["86243", "--prp", "--no-proof", "--spot", "off"];
    let mut cmd = bin("prove");
    cmd.args(args).arg("--key").arg(env.path("key")).args(["--engine", "cpu", "--state-dir"]).arg(env.path("state"));
    let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let lock = env.path("state/M86243-PRP-3.lock");
    let start = Instant::now();
    while !fs::read_to_string(&lock).is_ok_and(|t| t.starts_with("pid")) {
        assert!(start.elapsed() < Duration::from_secs(20), "no lock taken");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL; not waited for: the restart races its exit
    let mut again = args.to_vec();
    again.extend(["--stop-after", "1"]);
    let o = output_within_env(&env, &again);
    let _ = child.wait();
    assert!(!stderr(&o).contains("another prove is running"), "{}", stderr(&o));
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
}

/// Issue 35, "Also": an LL result checked by Jacobi alone says how much of it exact checks
/// covered, and points to PRP or `--ll-check double`; one checked by `double` does not.
#[test]
fn the_ll_check_coverage_is_stated() {
    let env = Env::new();
    let o = env.prove(&["9697", "--ll-check", "jacobi", "--spot", "off"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json(&o)["mersenne-cert"]["ll-exact-coverage"], 0.0);
    assert!(stderr(&o).contains("note: exact checks recomputed 0.0% of the LL iterations"), "{}", stderr(&o));
    assert!(stderr(&o).contains("--prp") && stderr(&o).contains("--ll-check double"), "{}", stderr(&o));
    let o = env.prove(&["9697", "--ll-check", "double"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json(&o)["mersenne-cert"]["ll-exact-coverage"], 1.0);
    assert!(!stderr(&o).contains("exact checks recomputed"), "{}", stderr(&o));
    let o = env.prove(&["9697", "--prp", "--no-proof"]);
    assert!(json(&o)["mersenne-cert"].get("ll-exact-coverage").is_none());
}
