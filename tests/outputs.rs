//! Issue 26's hostile-user tests of the binaries: outputs that are not regular files or cannot
//! be written are refused before the test starts, stale temporaries are cleaned, a full disk
//! leaves no torn result line, a full stdout is an error and not a panic, special files and
//! FIFOs are never read or waited on, thread counts are clamped, options that would do nothing
//! are refused, argument errors are one line with exit 1, and `--sample` always replays the
//! segment that ends at the final residue.

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
    // What a run killed during its write leaves (pid 4194305 is above Linux's pid limit).
    let stale = env.path("c.cert.tmp4194305");
    fs::write(&stale, b"half").unwrap();
    let o = env.prove(&["127", "--cert", cert.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stale.exists(), "{}", stderr(&o));
    assert!(stderr(&o).contains("removed 1 temporary file"), "{}", stderr(&o));

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
    // verify --gimps-proof takes none of the certificate's options.
    for extra in [&["--replay"][..], &["--sample", "2"], &["--jobs", "0"], &["--trust", "00"]] {
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
