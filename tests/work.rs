//! The GIMPS work loop end to end on the CPU engine: a worktodo with every kind of line (good,
//! malformed, non-Mersenne, unsupported base and residue type, known factors, duplicate), kill -9
//! at random points and at the two steps between the result and the line's removal, restarts,
//! then: one result per assignment and no more, every res64 against GMP computed here, every
//! field of every result line, the proof files their lines name, the unusable lines left as they
//! were. Also two workers (`--devices 2`), `--wait`, refusals, and LL lines checked as `prove`
//! checks a test (the double check below 1M, faults caught, a prime residue confirmed).

mod common;

use common::{bin, stderr};
use md5::{Digest, Md5};
use rug::Integer;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const AID1: &str = "0123456789ABCDEF0123456789ABCDEF";
const AID2: &str = "fedcba9876543210fedcba9876543210";

/// The work lines of the test: (line, exponent, LL?, aid).
fn good_lines() -> Vec<(String, u32, bool, Option<String>)> {
    vec![
        (format!("PRP={AID1},1,2,9689,-1,75,0"), 9689, false, Some(AID1.into())),
        ("PRP=N/A,1,2,9697,-1,75,0,3,5".into(), 9697, false, None),
        (format!("Test={AID2},9719,68,1"), 9719, true, Some(AID2.to_ascii_uppercase())),
        ("DoubleCheck=4423,60,1".into(), 4423, true, None),
        ("PRPDC=1,2,4447,-1,70,1.5,3,1".into(), 4447, false, None),
    ]
}

/// Lines that must stay in the file, untouched.
const UNUSABLE: [&str; 7] = [
    "PRP=3,2,9689,-1,75,0",
    "PRP=1,2,9689,-1,75,0,3,4",
    "PRP=1,2,9689,-1,75,0,5,1",
    "PRP=1,2,9689,-1,75,0,3,5,\"1234567\"",
    "Test=9691,68,1",
    "this is not a worktodo line",
    "Pminus1=N/A,1,2,9689,-1,1000,100000",
];

/// LL: s_{p-2} mod M_p from s_0 = 4; PRP: the type-1 residue 3^(M_p - 1) mod M_p. GMP, here.
fn reference_res64(p: u32, ll: bool) -> String {
    let m = (Integer::from(1) << p) - 1u32;
    let r = if ll {
        let mut s = Integer::from(4);
        for _ in 0..p - 2 {
            s = (s.clone() * &s - 2u32) % &m;
        }
        s
    } else {
        Integer::from(3).pow_mod(&(m.clone() - 1u32), &m).unwrap()
    };
    format!("{:016X}", r.to_u64_wrapping())
}

/// A test key beside the work (next to it when the work directory is missing on purpose).
fn key_file(dir: &Path) -> std::path::PathBuf {
    let home = if dir.is_dir() { dir } else { dir.parent().unwrap() };
    let key = home.join("test.key");
    if !key.exists() {
        std::fs::write(&key, format!("{}\n", "11".repeat(32))).unwrap();
    }
    key
}

fn work(dir: &Path, extra: &[&str]) -> Command {
    let mut c = bin("prove");
    c.arg("--work-dir")
        .arg(dir)
        .arg("--key")
        .arg(key_file(dir))
        .args(["--engine", "cpu", "--save-every", "0", "--spot-threads", "1", "--user", "tester", "--computer", "ci"])
        .args(extra);
    c
}

fn spawn(dir: &Path, extra: &[&str]) -> Child {
    work(dir, extra).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap()
}

fn result_lines(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("results.json.txt")).unwrap_or_default();
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect()
}

/// A small deterministic generator (the seed is printed, so a failure can be replayed).
struct Lcg(u64);
impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

fn is_upper_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b))
}

/// Every field of a result line, in order, against the format of docs/gimps.md.
fn check_line(v: &Value, dir: &Path, p: u32, ll: bool, aid: Option<&str>) {
    let o = v.as_object().unwrap();
    let mut keys: Vec<&str> = vec!["exponent", "worktype", "status", "res64", "res2048"];
    keys.extend(if ll { vec![] } else { vec!["residue-type"] });
    keys.extend(["shift-count", "fft-length", "errors", "error-code"]);
    keys.extend(if ll { vec![] } else { vec!["proof"] });
    keys.extend(["program", "timestamp"]);
    keys.extend(aid.map(|_| "aid"));
    keys.extend(["user", "computer", "mersenne-cert"]);
    assert_eq!(o.keys().map(String::as_str).collect::<Vec<_>>(), keys, "{v}");
    assert_eq!(v["exponent"], p);
    assert_eq!(v["worktype"], if ll { "LL" } else { "PRP-3" });
    let res64 = v["res64"].as_str().unwrap();
    assert_eq!(res64, reference_res64(p, ll), "M{p} ll={ll}");
    let prime = if ll { res64 == "0000000000000000" } else { res64 == "0000000000000001" };
    assert_eq!(v["status"], if prime { "P" } else { "C" });
    let res2048 = v["res2048"].as_str().unwrap();
    assert!(is_upper_hex(res2048, 512) && res2048.ends_with(res64), "{res2048}");
    if !ll {
        assert_eq!(v["residue-type"], 1);
    }
    assert!(v["shift-count"].as_u64().unwrap() < p as u64);
    let n = v["fft-length"].as_u64().unwrap();
    assert!(n.is_power_of_two() && n >= 64 && n < p as u64, "fft-length {n}");
    assert_eq!(v["errors"], if ll { serde_json::json!({"Jacobi": 0}) } else { serde_json::json!({"gerbicz": 0}) });
    assert_eq!(v["error-code"], "00000000");
    if !ll {
        let proof = &v["proof"];
        assert_eq!((proof["version"].as_u64(), proof["hashsize"].as_u64()), (Some(2), Some(64)));
        let power = proof["power"].as_u64().unwrap();
        let file = std::fs::read(dir.join("proof").join(format!("{p}-{power}.proof"))).unwrap();
        assert_eq!(proof["md5"], hex::encode(Md5::digest(&file)));
        assert!(file.starts_with(format!("PRP PROOF\nVERSION=2\nHASHSIZE=64\nPOWER={power}\nNUMBER=M{p}\n").as_bytes()));
    }
    let program = &v["program"];
    assert_eq!(
        (program["name"].as_str(), program["version"].as_str()),
        (Some("mersenne-cert"), Some(env!("CARGO_PKG_VERSION")))
    );
    assert_eq!(program["os"]["os"], "Linux");
    assert_eq!(program["os"]["architecture"], std::env::consts::ARCH);
    let t = v["timestamp"].as_str().unwrap().as_bytes();
    assert!(t.len() == 19 && t[4] == b'-' && t[7] == b'-' && t[10] == b' ' && t[13] == b':' && t[16] == b':', "{v}");
    assert!(t.iter().enumerate().all(|(i, c)| [4, 7, 10, 13, 16].contains(&i) || c.is_ascii_digit()));
    assert_eq!(v.get("aid").and_then(Value::as_str), aid);
    assert_eq!((v["user"].as_str(), v["computer"].as_str()), (Some("tester"), Some("ci")));
    let ours = &v["mersenne-cert"];
    assert_eq!(ours["iterations"], if ll { p as u64 - 2 } else { p as u64 });
    assert_eq!(ours["certificate"]["blake3"].as_str().unwrap().len(), 64);
    // No local path: the line goes to the server verbatim.
    let text = v.to_string();
    assert!(!text.contains(dir.to_str().unwrap()) && !text.contains(".cbor") && !text.contains(".proof"), "{text}");
    // The certificate is there (named with the assignment id when there is one), is the one the
    // line names, and verifies.
    let worktype = if ll { "LL" } else { "PRP-3" };
    let name = match aid {
        Some(aid) => format!("{p}-{worktype}-{aid}.cbor"),
        None => format!("{p}-{worktype}.cbor"),
    };
    let cert = dir.join("cert").join(name);
    let blake3 = blake3::hash(&std::fs::read(&cert).unwrap()).to_hex().to_string();
    assert_eq!(ours["certificate"]["blake3"], blake3, "{}", cert.display());
    let o = bin("verify").arg(&cert).args(["--engine", "cpu"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn every_line_kind_survives_kills_without_lost_or_duplicate_results() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = good_lines();
    let mut lines: Vec<String> = Vec::new();
    lines.push("[Worker #1]".into());
    lines.push(UNUSABLE[0].into());
    lines.extend(good.iter().take(3).map(|g| g.0.clone()));
    lines.extend(UNUSABLE[1..].iter().map(|s| s.to_string()));
    lines.push(good[0].0.clone()); // a duplicate of the first assignment
    lines.extend(good.iter().skip(3).map(|g| g.0.clone()));
    lines.push(good[1].0.clone()); // and of one without an id
    std::fs::write(d.join("worktodo.txt"), lines.join("\n") + "\n").unwrap();

    // A kill right after the append, and one after the state is cleared: no rerun, no duplicate.
    for at in ["result", "state"] {
        let o = work(d, &["--crash-at", at]).output().unwrap();
        assert!(!o.status.success(), "the crash at {at} crashes");
        assert!(stderr(&o).contains("testing: crashing at"), "{}", stderr(&o));
    }
    assert_eq!(result_lines(d).len(), 2, "one result per crashed run");

    // Then kill -9 at random points, then a run to the end.
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64;
    eprintln!("kill schedule seed {seed}");
    let mut rng = Lcg(seed);
    let mut kills = 0;
    loop {
        let mut child = spawn(d, &[]);
        let start = Instant::now();
        let kill_at = Duration::from_millis(if kills < 12 { 30 + rng.below(400) } else { 600_000 });
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if start.elapsed() >= kill_at {
                child.kill().unwrap();
                child.wait().unwrap();
                break None;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        match status {
            None => kills += 1,
            Some(s) => {
                assert!(s.success(), "the loop failed after {kills} kills (seed {seed})");
                break;
            }
        }
    }
    eprintln!("{kills} kills");

    let results = result_lines(d);
    assert_eq!(results.len(), good.len(), "one result per assignment (seed {seed}): {results:#?}");
    for (line, p, ll, aid) in &good {
        let found: Vec<&Value> = results
            .iter()
            .filter(|v| v["exponent"] == *p && v["worktype"] == if *ll { "LL" } else { "PRP-3" })
            .collect();
        assert_eq!(found.len(), 1, "{line}");
        check_line(found[0], d, *p, *ll, aid.as_deref());
    }
    // Only the lines that are not work for this program are left, exactly as they were.
    let left = std::fs::read_to_string(d.join("worktodo.txt")).unwrap();
    let mut expected = vec!["[Worker #1]"];
    expected.extend(UNUSABLE);
    assert_eq!(left.lines().collect::<Vec<_>>(), expected);
    let left: Vec<_> = std::fs::read_dir(d.join("state")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "no saved state or claim is left: {left:?}");
    // The progress log has checkpoint lines with res64, up to the end of each test.
    let log = std::fs::read_to_string(d.join("progress.log")).unwrap();
    assert!(log
        .lines()
        .any(|l| l.contains("M9719 LL iteration") && l.contains("us/iter, ETA") && l.contains("res64 ")));
    assert!(log.contains("M4447 PRP-3 iteration 4447/4447 (100.00%)"), "{log}");

    // A run on the finished directory finds nothing to do and warns about each unusable line once.
    let o = work(d, &[]).output().unwrap();
    assert!(o.status.success());
    let err = stderr(&o);
    for line in UNUSABLE {
        assert_eq!(err.matches(&format!("left in place: '{line}'")).count(), 1, "{err}");
    }
    assert_eq!(result_lines(d).len(), good.len());
}

#[test]
fn two_workers_share_the_results_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("worktodo-0.txt"), "Test=4423,60,1\nPRP=1,2,4447,-1\n").unwrap();
    std::fs::write(d.join("worktodo-1.txt"), "PRP=1,2,4423,-1\nTest=4447,60,1\n").unwrap();
    let o = work(d, &["--devices", "2"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let results = result_lines(d);
    assert_eq!(results.len(), 4);
    for (p, ll) in [(4423, true), (4447, false), (4423, false), (4447, true)] {
        let v = results.iter().find(|v| v["exponent"] == p && v["worktype"] == if ll { "LL" } else { "PRP-3" });
        check_line(v.unwrap(), d, p, ll, None);
    }
    for n in 0..2 {
        assert_eq!(std::fs::read_to_string(d.join(format!("worktodo-{n}.txt"))).unwrap(), "");
        assert!(d.join(format!("state-{n}")).is_dir());
    }
    // No worktodo-N.txt: a clear refusal.
    let empty = tempfile::tempdir().unwrap();
    let o = work(empty.path(), &["--devices", "2"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("nor a worktodo-N.txt"), "{}", stderr(&o));
}

#[test]
fn wait_polls_for_new_lines_until_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut child = work(d, &["--wait", "0.1"]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    std::fs::write(d.join("worktodo.txt"), "Test=4423\n").unwrap();
    let start = Instant::now();
    while result_lines(d).is_empty() {
        assert!(start.elapsed() < Duration::from_secs(60), "the new line was never run");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(child.try_wait().unwrap().is_none(), "still waiting for work");
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    check_line(&result_lines(d)[0], d, 4423, true, None);
}

#[test]
fn work_dir_refusals_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = work(&d.join("missing"), &[]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("not a directory"), "{}", stderr(&o));
    // A partial test never goes to a results file; single-test options are refused.
    for extra in [&["--iterations", "100"][..], &["--cert", "x.cbor"], &["--prp"], &["--json", "r.json"]] {
        let o = work(d, extra).output().unwrap();
        assert!(!o.status.success(), "{extra:?}");
        assert!(stderr(&o).contains("cannot be used with"), "{extra:?}: {}", stderr(&o));
    }
    assert!(!d.join("results.json.txt").exists());
    let o = work(d, &["--wait=0"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn a_worktodo_ll_line_is_checked_as_prove_checks_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Below 1M, LL is doubly checked (--ll-check auto): faults injected into each test (spot
    // checks off) are caught and rolled back, and never reach a result line.
    std::fs::write(d.join("worktodo.txt"), "Test=9689,60,1\nDoubleCheck=4423,60,1\n").unwrap();
    let o = work(d, &["--spot", "off", "--inject-fault", "1:3:9", "--inject-fault", "4000:5:7"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let results = result_lines(d);
    assert_eq!(results.len(), 2);
    for (v, p) in results.iter().zip([9689, 4423]) {
        assert_eq!((v["exponent"].as_u64(), v["worktype"].as_str()), (Some(p as u64), Some("LL")));
        assert_eq!(v["res64"], reference_res64(p, true), "M{p}: {v}");
        assert_eq!(v["status"], "P");
        let checks = &v["mersenne-cert"]["checks"];
        assert_eq!(checks["faults_injected"], 2, "M{p}: {checks}");
        assert!(checks["rollbacks"].as_u64() >= Some(2), "M{p}: {checks}");
        // The errors caught and recovered are reported, in prime95's error-code layout.
        let count = |k: &str| checks[k].as_u64().unwrap_or(0);
        let (jacobi, double) = (count("jacobi_failures"), count("double_failures"));
        assert!(jacobi + double >= 1, "M{p}: the faults were caught: {checks}");
        assert_eq!(v["errors"]["Jacobi"], jacobi, "M{p}: {v}");
        assert_eq!(v["errors"].get("double-check").and_then(Value::as_u64).unwrap_or(0), double, "M{p}: {v}");
        let code = (jacobi.min(15) << 4) | (double.min(15) << 20);
        assert_eq!(v["error-code"], format!("{code:08X}"), "M{p}: {v}");
        let doubled = checks["double_iterations"].as_u64().unwrap();
        assert!(doubled >= p as u64 - 2, "M{p}: every iteration is recomputed: {checks}");
        // The certificate holds the same checks, and verifies.
        let cert = d.join("cert").join(format!("{p}-LL.cbor"));
        let (body, _) = mersenne_cert::cert::open(&std::fs::read(&cert).unwrap(), None).unwrap();
        assert_eq!(body.checks.summary.get("double_checks").copied(), checks["double_checks"].as_u64());
        let o = bin("verify").arg(&cert).args(["--engine", "cpu"]).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    // Above 1M (`--ll-check jacobi` stands in for it here): a prime residue is confirmed by a
    // doubly checked rerun before its line is written, as `prove` does.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("worktodo.txt"), "Test=9689,60,1\n").unwrap();
    let o = work(d, &["--spot", "off", "--ll-check", "jacobi"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("M9689: the LL residue says prime; confirming it"), "{}", stderr(&o));
    let v = result_lines(d).pop().unwrap();
    check_line(&v, d, 9689, true, None);
    let checks = &v["mersenne-cert"]["checks"];
    assert_eq!(checks["confirmation_reruns"], 1, "{checks}");
    assert!(checks["double_checks"].as_u64() >= Some(1), "{checks}");
}

/// The claims recorded in claims.txt: (line, worker).
fn claim_records(dir: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(dir.join("claims.txt")).unwrap_or_default();
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| (v["line"].as_str().unwrap().to_string(), v["worker"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn workers_share_one_worktodo_and_a_killed_workers_claim_is_taken_over() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // (line, exponent, LL?): tests long enough (tenths of a second) for the kill to land in one.
    let lines: Vec<(String, u32, bool)> = vec![
        ("Test=N/A,21701,70,1".into(), 21701, true),
        ("PRP=N/A,1,2,19937,-1,70,0".into(), 19937, false),
        ("Test=11213,68,1".into(), 11213, true),
        ("PRP=1,2,9941,-1".into(), 9941, false),
        ("DoubleCheck=9689,68,1".into(), 9689, true),
        ("PRP=1,2,11213,-1,70,0,3,1".into(), 11213, false),
        ("Test=4423".into(), 4423, true),
        ("PRPDC=1,2,4447,-1,70,1,3,5".into(), 4447, false),
    ];
    let mut text: String = lines.iter().map(|l| format!("{}\n", l.0)).collect();
    text.push_str("Test=9691,68,1\n"); // not prime: left for the user, by every worker
    std::fs::write(d.join("worktodo.txt"), &text).unwrap();
    // Worker 2 also has a file of its own, which it takes first.
    std::fs::write(d.join("worktodo-2.txt"), "Test=4441\n").unwrap();

    let start =
        |n: usize| work(d, &["--device", &n.to_string()]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let mut workers: Vec<Child> = (0..3).map(start).collect();
    // Kill worker 1 (-9) while it holds a claim.
    let t0 = Instant::now();
    while !claim_records(d).iter().any(|(_, w)| w == "worker 1") {
        assert!(t0.elapsed() < Duration::from_secs(120), "worker 1 never claimed a line");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(50));
    workers[1].kill().unwrap();
    workers[1].wait().unwrap();
    let stale: Vec<String> =
        claim_records(d).into_iter().filter(|(_, w)| w == "worker 1").map(|(line, _)| line).collect();
    eprintln!("worker 1 killed holding {stale:?}");
    for n in [0, 2] {
        let o = workers.remove(if n == 0 { 0 } else { 1 }).wait_with_output().unwrap();
        assert!(o.status.success(), "worker {n}: {}", stderr(&o));
        assert_eq!(stderr(&o).matches("left in place: 'Test=9691,68,1'").count(), 1, "{}", stderr(&o));
    }
    // A restart finishes whatever the survivors did not take (nothing, when they took it over).
    let o = work(d, &["--device", "1"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));

    let results = result_lines(d);
    let mut all = lines.clone();
    all.push(("Test=4441".into(), 4441, true));
    assert_eq!(results.len(), all.len(), "one result per line, no line run twice: {results:#?}");
    for (line, p, ll) in &all {
        let found: Vec<&Value> = results
            .iter()
            .filter(|v| v["exponent"] == *p && v["worktype"] == if *ll { "LL" } else { "PRP-3" })
            .collect();
        assert_eq!(found.len(), 1, "{line}");
        check_line(found[0], d, *p, *ll, None);
    }
    assert_eq!(std::fs::read_to_string(d.join("worktodo.txt")).unwrap(), "Test=9691,68,1\n");
    assert_eq!(std::fs::read_to_string(d.join("worktodo-2.txt")).unwrap(), "");
    assert!(claim_records(d).is_empty(), "{:?}", claim_records(d));
    for state in ["state", "state-2"] {
        let left: Vec<_> = std::fs::read_dir(d.join(state)).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(left.is_empty(), "{state}: {left:?}");
    }
    // Every worker's lines in the progress log carry its tag.
    let log = std::fs::read_to_string(d.join("progress.log")).unwrap();
    assert!(log.lines().any(|l| l.contains(" worker 0: M")), "{log}");
}

/// A test long enough (several seconds on GMP) to edit the worktodo file while it runs.
const LONG: u32 = 86243;

fn wait_for(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Replace the worktodo file as AutoPrimeNet does: under its `.lck`, a new file renamed over it.
fn rewrite_as_autoprimenet(dir: &Path, text: &str) {
    let lck = dir.join("worktodo.txt.lck");
    let f = std::fs::OpenOptions::new().write(true).create_new(true).open(&lck);
    let _held = f.expect("AutoPrimeNet's lock is free");
    std::fs::write(dir.join("worktodo.tmp"), text).unwrap();
    std::fs::rename(dir.join("worktodo.tmp"), dir.join("worktodo.txt")).unwrap();
    std::fs::remove_file(&lck).unwrap();
}

#[test]
fn a_line_given_an_id_while_it_runs_is_run_once_and_reported_with_the_id() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("worktodo.txt"), format!("PRP=1,2,{LONG},-1,75,0\nTest=N/A,9689\n")).unwrap();
    let mut child = spawn(d, &[]);
    let log = d.join("progress.log");
    wait_for("the test to start", Duration::from_secs(120), || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains(&format!("M{LONG} PRP-3 iteration")))
    });
    // AutoPrimeNet's register_assignments gives the id-less line an id.
    rewrite_as_autoprimenet(d, &format!("PRP={AID1},1,2,{LONG},-1,75,0\nTest=N/A,9689\n"));
    assert!(result_lines(d).is_empty(), "the rewrite came before the result (else make LONG longer)");
    assert!(child.wait().unwrap().success());
    let results = result_lines(d);
    assert_eq!(results.len(), 2, "{results:#?}");
    check_line(&results[0], d, LONG, false, Some(AID1));
    check_line(&results[1], d, 9689, true, None);
    assert_eq!(std::fs::read_to_string(d.join("worktodo.txt")).unwrap(), "");
    // A second run finds nothing to do; the certificate is not overwritten.
    let cert = d.join("cert").join(format!("{LONG}-PRP-3-{AID1}.cbor"));
    let before = std::fs::read(&cert).unwrap();
    assert!(work(d, &[]).output().unwrap().status.success());
    assert_eq!(result_lines(d).len(), 2);
    assert_eq!(std::fs::read(&cert).unwrap(), before);
}

#[test]
fn only_our_own_result_for_the_same_line_counts_as_done() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // PRPLL's LL result for M3217, and one of ours for a first-time PRP of M9719.
    let prpll = r#"{"status":"C","exponent":3217,"worktype":"LL","res64":"0000000000000000","program":{"name":"prpll","version":"0.15"}}"#;
    let mine = r#"{"exponent":9719,"worktype":"PRP-3","status":"C","res64":"0","program":{"name":"mersenne-cert","version":"0.1.0"},"mersenne-cert":{"worktodo":"prp=1,2,9719,-1,75,0"}}"#;
    std::fs::write(d.join("results.json.txt"), format!("{prpll}\n{mine}\n")).unwrap();
    std::fs::write(
        d.join("worktodo.txt"),
        "DoubleCheck=N/A,3217\nPRPDC=N/A,1,2,9719,-1,75,0\nPRP=N/A,1,2,9719,-1,75,0\n",
    )
    .unwrap();
    let o = work(d, &[]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let results = result_lines(d);
    assert_eq!(results.len(), 4, "the double checks ran, the done PRP line did not: {results:#?}");
    check_line(&results[2], d, 3217, true, None);
    assert_eq!(
        (results[3]["exponent"].as_u64(), results[3]["res64"].as_str()),
        (Some(9719), Some(&*reference_res64(9719, false)))
    );
    assert_eq!(std::fs::read_to_string(d.join("worktodo.txt")).unwrap(), "");
    // The double check's certificate.
    assert!(d.join("cert/9719-PRP-3.cbor").exists());
}

#[test]
fn autoprimenet_forms_run_and_its_lock_is_honoured() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let lines = format!("Test=0,4253\nPRP=0,1,2,4423,-1,75,0\nB1=10,B2=100;PRP={AID2},1,2,4447,-1,75,0\n");
    std::fs::write(d.join("worktodo.txt"), &lines).unwrap();
    // AutoPrimeNet holds its lock (an empty worktodo.txt.lck): the first test runs, but its line is
    // not removed until the lock is gone.
    let lck = d.join("worktodo.txt.lck");
    std::fs::write(&lck, "").unwrap();
    let child = work(d, &[]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    wait_for("the first result", Duration::from_secs(60), || !result_lines(d).is_empty());
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        std::fs::read_to_string(d.join("worktodo.txt")).unwrap(),
        lines,
        "the file is not edited under the lock"
    );
    std::fs::remove_file(&lck).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("P-1 bounds 'B1=10,B2=100' ignored"), "{}", stderr(&o));
    let results = result_lines(d);
    assert_eq!(results.len(), 3);
    check_line(&results[0], d, 4253, true, None);
    check_line(&results[1], d, 4423, false, None);
    check_line(&results[2], d, 4447, false, Some(&AID2.to_ascii_uppercase()));
    assert_eq!(std::fs::read_to_string(d.join("worktodo.txt")).unwrap(), "");
    assert!(!lck.exists());
}
