//! `prove --work-dir DIR --primenet` against a fake PrimeNet written here (a std TcpListener on
//! 127.0.0.1, plain http://): registration, assignments (one it cannot run is handed back),
//! results with the parameters AutoPrimeNet sends, the chunked proof upload, progress reports, a
//! server error, a dropped connection, the server down, and kill -9 between writing a result and
//! sending it and between sending it and marking it sent: every result reaches the server, and
//! reaches it as one accepted result per assignment id. A result whose certificate does not
//! back it is never sent. Assignments handed back (`--unreserve-all`, `--unreserve P`, and the
//! loop's rule for one the queue reaches too late) leave their file only once the server took
//! them back.

mod common;

use common::{bin, stderr};
use md5::{Digest, Md5};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

const AID1: &str = "11111111111111111111111111111111";
const AID2: &str = "22222222222222222222222222222222";
const AID3: &str = "33333333333333333333333333333333";
const TF: &str = "44444444444444444444444444444444";

/// How the fake answers one request.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    /// Close the connection without an answer.
    Drop,
    /// pnErrorResult=3 (server busy).
    Busy,
    /// pnErrorResult=9 (access denied): a refusal that trying again does not change.
    Refuse,
}

/// One request the fake received: (path, query, body).
type Request = (String, BTreeMap<String, String>, Vec<u8>);

#[derive(Default)]
struct State {
    requests: Vec<Request>,
    /// The answers to `ga`, in order (then "no assignment").
    assignments: VecDeque<String>,
    /// Faults for the next requests of a transaction (`t`) or path.
    faults: HashMap<String, VecDeque<Fault>>,
    /// Assignment ids whose result was accepted (a second report answers 43).
    accepted: Vec<String>,
    /// Proof uploads: MD5 -> bytes so far, and the finished files.
    partial: HashMap<String, Vec<u8>>,
    proofs: HashMap<String, Vec<u8>>,
}

struct Fake {
    port: u16,
    state: Arc<Mutex<State>>,
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                out.push(u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap(), 16).unwrap());
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

fn read_request(s: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte).ok()? == 0 {
            return None;
        }
        buf.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&buf).to_string();
    let mut lines = head.lines();
    let target = lines.next()?.split(' ').nth(1)?.to_string();
    let len: usize = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .map_or(0, |(_, v)| v.trim().parse().unwrap());
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).ok()?;
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let query = query.split('&').filter(|p| !p.is_empty()).map(|p| {
        let (k, v) = p.split_once('=').unwrap_or((p, ""));
        (decode(k), decode(v))
    });
    Some((path.to_string(), query.collect(), body))
}

fn respond(s: &mut TcpStream, status: &str, body: &str) {
    let _ = write!(s, "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
}

fn v5(answer: &str) -> String {
    format!("pnErrorResult=0\npnErrorDetail=SUCCESS\n{answer}==END==\n")
}

fn v5_error(code: u32, detail: &str) -> String {
    format!("pnErrorResult={code}\npnErrorDetail={detail}\n==END==\n")
}

impl Fake {
    fn start(port: u16) -> Fake {
        let listener = TcpListener::bind(("127.0.0.1", port)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State::default()));
        let st = state.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut s) = stream else { continue };
                let Some((path, query, body)) = read_request(&mut s) else { continue };
                let mut st = st.lock().unwrap();
                st.requests.push((path.clone(), query.clone(), body.clone()));
                let t = query.get("t").cloned().unwrap_or_else(|| path.clone());
                match st.faults.get_mut(&t).and_then(VecDeque::pop_front) {
                    Some(Fault::Drop) => continue,
                    Some(Fault::Busy) => {
                        respond(&mut s, "200 OK", &v5_error(3, "busy"));
                        continue;
                    }
                    Some(Fault::Refuse) => {
                        respond(&mut s, "200 OK", &v5_error(9, "access denied"));
                        continue;
                    }
                    None => {}
                }
                let answer = st.answer(port, &path, &query, &body);
                respond(&mut s, "200 OK", &answer);
            }
        });
        Fake { port, state }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v5server/", self.port)
    }

    fn fault(&self, t: &str, faults: &[Fault]) {
        self.state.lock().unwrap().faults.entry(t.into()).or_default().extend(faults);
    }

    fn transactions(&self, t: &str) -> Vec<BTreeMap<String, String>> {
        let st = self.state.lock().unwrap();
        st.requests.iter().filter(|r| r.1.get("t").map(String::as_str) == Some(t)).map(|r| r.1.clone()).collect()
    }
}

impl State {
    fn answer(&mut self, port: u16, path: &str, q: &BTreeMap<String, String>, body: &[u8]) -> String {
        match path {
            "/v5server/" => {
                assert_eq!((q["px"].as_str(), q["v"].as_str()), ("GIMPS", "0.95"), "{q:?}");
                assert_eq!((q["ss"].as_str(), q["sh"].as_str()), ("19191919", "ABCDABCDABCDABCDABCDABCDABCDABCD"));
                match q["t"].as_str() {
                    "uc" => v5(&format!("g={}\nu={}\ncn={}\nun=Tester\nod=1\n", q["g"], q["u"], q["cn"])),
                    "po" => v5(&format!("w={}\n", q["w"])),
                    "ga" => match self.assignments.pop_front() {
                        Some(a) => v5(&a),
                        None => v5_error(40, "no assignment"),
                    },
                    "ar" => {
                        let k = q["k"].clone();
                        if self.accepted.contains(&k) {
                            v5_error(43, "invalid assignment key")
                        } else {
                            self.accepted.push(k);
                            v5("")
                        }
                    }
                    "ap" | "au" => v5(""),
                    other => v5_error(5, &format!("invalid transaction {other}")),
                }
            }
            "/proof_upload/" => {
                let md5 = &q["FileMD5"];
                if self.proofs.contains_key(md5) {
                    return r#"{"error_status":409,"error_description":"already uploaded"}"#.into();
                }
                let have = self.partial.get(md5).map_or(0, Vec::len);
                let size: usize = q["FileSize"].parse().unwrap();
                // Ask for the file in pieces of 100 bytes, to exercise the resumable upload.
                format!(
                    r#"{{"URLToUse":"http://127.0.0.1:{port}/proof_upload/data/","need":{{"{have}":{}}}}}"#,
                    (have + 99).min(size - 1)
                )
            }
            "/proof_upload/data/" => {
                let md5 = q["FileMD5"].clone();
                let offset: usize = q["DataOffset"].parse().unwrap();
                let size: usize = q["DataSize"].parse().unwrap();
                // The multipart body: headers, a blank line, the data, the closing boundary.
                let start = body.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
                let data = &body[start..start + size];
                assert_eq!(hex::encode(Md5::digest(data)), q["DataMD5"], "chunk MD5");
                let part = self.partial.entry(md5.clone()).or_default();
                assert_eq!(part.len(), offset, "chunks in order");
                part.extend_from_slice(data);
                let total = part.len();
                if hex::encode(Md5::digest(&part[..])) == md5 {
                    let file = self.partial.remove(&md5).unwrap();
                    self.proofs.insert(md5, file);
                    return r#"{"FileUploaded":1}"#.into();
                }
                format!(r#"{{"need":{{"{total}":{}}}}}"#, total + 99)
            }
            other => panic!("unexpected path {other}"),
        }
    }
}

/// A test key beside the work.
fn key_file(dir: &Path) -> std::path::PathBuf {
    let key = dir.join("test.key");
    if !key.exists() {
        std::fs::write(&key, format!("{}\n", "22".repeat(32))).unwrap();
    }
    key
}

fn work(dir: &Path) -> Command {
    let mut c = bin("prove");
    c.arg("--work-dir").arg(dir).arg("--key").arg(key_file(dir));
    c.args(["--engine", "cpu", "--save-every", "0", "--spot-threads", "1", "--user", "tester", "--computer", "ci"]);
    c.args(["--primenet", "--primenet-backoff", "0.05", "--primenet-retries", "2", "--primenet-timeout", "10"]);
    c
}

fn prove(dir: &Path, url: &str, extra: &[&str]) -> Command {
    let mut c = work(dir);
    c.args(["--primenet-url", url]).args(extra);
    c
}

fn results(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("results.json.txt")).unwrap_or_default();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn outcomes(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("primenet-sent.txt")).unwrap_or_default();
    text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["outcome"].as_str().unwrap().to_string()).collect()
}

#[test]
fn registration_assignments_results_proofs_and_progress_reach_the_server() {
    let fake = Fake::start(0);
    {
        let mut st = fake.state.lock().unwrap();
        // Trial factoring first: not a test this program runs, handed back.
        st.assignments.push_back(format!("w=2\nk={TF}\nn=100000007\nsf=70\nef=71\n"));
        st.assignments.push_back(format!("w=150\nk={AID1}\nn=44483\nA=1\nb=2\nc=-1\nsf=75\nsaved=0\nbase=3\nrt=1\n"));
        st.assignments.push_back(format!("w=101\nk={AID2}\nn=4423\nsf=68\np1=1\n"));
    }
    // A dropped connection at the first request for work, a server error at the first result.
    fake.fault("ga", &[Fault::Drop]);
    fake.fault("ar", &[Fault::Busy]);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = prove(d, &fake.url(), &["--primenet-progress-every", "0.2", "--work-pref", "prp"]).output().unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");

    let uc = fake.transactions("uc");
    assert_eq!(uc.len(), 1, "registered once");
    assert_eq!((uc[0]["u"].as_str(), uc[0]["cn"].as_str()), ("tester", "ci"));
    assert!(uc[0]["a"].contains(",mersenne-cert,v"), "our own name: {}", uc[0]["a"]);
    let guid = uc[0]["g"].clone();
    assert_eq!(guid.len(), 32);
    assert_eq!(fake.transactions("po")[0]["w"], "150");
    let au = fake.transactions("au");
    assert_eq!(au.len(), 1);
    assert_eq!(au[0]["k"], TF);
    // Every later request names the registered computer.
    for t in ["ga", "ar", "au", "ap"] {
        assert!(fake.transactions(t).iter().all(|q| q["g"] == guid), "{t}");
    }

    let lines = results(d);
    assert_eq!(lines.len(), 2, "{lines:#?}");
    let ar = fake.transactions("ar");
    assert_eq!(ar.len(), 3, "one busy answer, then each result once: {ar:#?}");
    let prp = ar.iter().rev().find(|q| q["k"] == AID1).unwrap();
    let line: Value = serde_json::from_str(&prp["m"]).unwrap();
    assert_eq!(line, lines[0], "the line is sent as written");
    for (k, v) in
        [("r", "150"), ("n", "44483"), ("d", "1"), ("A", "1"), ("b", "2"), ("c", "-1"), ("base", "3"), ("gbz", "1")]
    {
        assert_eq!(prp[k], v, "{k}");
    }
    assert_eq!((prp["rd"].as_str(), prp["rt"].as_str()), (line["res64"].as_str().unwrap(), "1"));
    assert_eq!(prp["sc"], line["shift-count"].to_string());
    assert_eq!(prp["ec"], line["error-code"].as_str().unwrap());
    assert_eq!(prp["fftlen"], line["fft-length"].to_string());
    assert_eq!(
        (prp["pp"].clone(), prp["ph"].as_str()),
        (line["proof"]["power"].to_string(), line["proof"]["md5"].as_str().unwrap())
    );
    let ll = ar.iter().find(|q| q["k"] == AID2).unwrap();
    assert_eq!((ll["r"].as_str(), ll["n"].as_str()), ("101", "4423"), "M4423 is prime: no residue");
    assert!(!ll.contains_key("rd"));

    // The proof, uploaded in 100-byte pieces, is the file the line names, now in proof/sent/.
    let md5 = line["proof"]["md5"].as_str().unwrap();
    let power = line["proof"]["power"].as_u64().unwrap();
    let sent = std::fs::read(d.join(format!("proof/sent/44483-{power}.proof"))).unwrap();
    assert_eq!(fake.state.lock().unwrap().proofs.get(md5), Some(&sent));
    assert!(!d.join(format!("proof/44483-{power}.proof")).exists());

    assert_eq!(outcomes(d), ["accepted", "accepted"]);
    assert_eq!(std::fs::read_to_string(d.join("worktodo.txt")).unwrap(), "");
    let ap = fake.transactions("ap");
    assert!(!ap.is_empty(), "progress reported: {err}");
    assert!(ap.iter().all(|q| q["k"] == AID1 || q["k"] == AID2));
    let pct: f64 = ap[0]["p"].parse().unwrap();
    assert!((0.0..=100.0).contains(&pct) && ap[0]["e"].parse::<u64>().unwrap() >= 1);
}

#[test]
fn the_server_down_and_kills_between_writing_and_sending_lose_and_repeat_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A port with no server on it.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/v5server/");
    std::fs::write(d.join("worktodo.txt"), format!("PRP={AID1},1,2,9689,-1,75,0\n")).unwrap();
    let o = prove(d, &url, &[]).output().unwrap();
    assert!(o.status.success(), "the work goes on with the server down: {}", stderr(&o));
    assert!(stderr(&o).contains("trying again"), "{}", stderr(&o));
    assert_eq!(results(d).len(), 1);
    assert!(outcomes(d).is_empty(), "nothing sent, nothing lost: the line is queued");

    // kill -9 right after the result is written, before it is sent (the server now up).
    let fake = Fake::start(port);
    std::fs::write(d.join("worktodo.txt"), format!("DoubleCheck={AID2},4423,68,1\n")).unwrap();
    let o = prove(d, &url, &["--crash-at", "result"]).output().unwrap();
    assert!(stderr(&o).contains("testing: crashing at AfterResult"), "{}", stderr(&o));
    // The restart sends the queued result (before the first) and finds the line done.
    std::fs::write(d.join("worktodo.txt"), format!("DoubleCheck={AID2},4423,68,1\nPRP={AID3},1,2,4447,-1,75,0\n"))
        .unwrap();
    // kill -9 after the server answered the next result, before it is marked sent.
    let o = prove(d, &url, &["--crash-at", "sent"]).output().unwrap();
    assert!(stderr(&o).contains("testing: crashing at AfterSend"), "{}", stderr(&o));
    let o = prove(d, &url, &[]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));

    let lines = results(d);
    assert_eq!(lines.len(), 3, "{lines:#?}");
    let st = fake.state.lock().unwrap();
    let mut accepted = st.accepted.clone();
    accepted.sort();
    assert_eq!(accepted, [AID1, AID2, AID3], "each result accepted once");
    let ar: Vec<&str> = st
        .requests
        .iter()
        .filter(|r| r.1.get("t").map(String::as_str) == Some("ar"))
        .map(|r| r.1["k"].as_str())
        .collect();
    assert_eq!(ar.len(), 4, "the result killed before its mark went twice: {ar:?}");
    let out = outcomes(d);
    assert_eq!(out.len(), 3, "{out:?}");
    assert_eq!(out.iter().filter(|o| o.starts_with("known")).count(), 1, "{out:?}");
    // The proofs went up once each result was in.
    assert_eq!(st.proofs.len(), 2);
    assert_eq!(std::fs::read_to_string(d.join("worktodo.txt")).unwrap(), "");
    let ids: HashSet<&str> = lines.iter().map(|l| l["aid"].as_str().unwrap()).collect();
    assert_eq!(ids, HashSet::from([AID1, AID2, AID3]));
}

#[test]
fn a_result_its_certificate_does_not_back_is_never_sent() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("worktodo.txt"), format!("PRP={AID1},1,2,4423,-1,75,0\nTest={AID2},4253\n")).unwrap();
    let mut local = bin("prove");
    local.arg("--work-dir").arg(d).arg("--key").arg(key_file(d)).args(["--engine", "cpu", "--spot-threads", "1"]);
    assert!(local.output().unwrap().status.success());
    // The PRP line's residue altered after the fact.
    let text = std::fs::read_to_string(d.join("results.json.txt")).unwrap();
    let mut lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    lines[0]["res64"] = "0000000000000002".into();
    std::fs::write(d.join("results.json.txt"), lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let fake = Fake::start(0);
    let o = prove(d, &fake.url(), &[]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("M4423: result withheld, it would not pass verify: res64"), "{}", stderr(&o));
    let ar = fake.transactions("ar");
    assert_eq!(ar.len(), 1, "only the LL result went");
    assert_eq!(ar[0]["k"], AID2);
    assert_eq!(outcomes(d)[0].split(':').next(), Some("withheld"));
    assert!(fake.state.lock().unwrap().proofs.is_empty(), "no proof for a withheld result");
}

#[test]
fn primenet_options_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (extra, needle) in [
        (&["--primenet-url", "ftp://x/"][..], "http:// or https://"),
        (&["--primenet-queue", "0"], "at least 1"),
        (&["--primenet-progress-every", "0"], "positive number"),
    ] {
        let o = work(d).args(extra).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{extra:?}");
        assert!(stderr(&o).contains(needle), "{extra:?}: {}", stderr(&o));
    }
    let o = bin("prove").arg("--work-dir").arg(d).arg("--primenet").output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--user"), "{}", stderr(&o));
}

fn worktodo(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("worktodo.txt")).unwrap()
}

#[test]
fn unreserve_all_and_one_exponent_remove_only_what_the_server_took_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let todo = format!(
        "# mine\nTest=N/A,3217\nDoubleCheck={AID3},4423,68,1\nPRP={AID1},1,2,9689,-1,75,0\nTest={AID2},4253\nPRP={AID1},1,2,9689,-1,75,0\n"
    );
    std::fs::write(d.join("worktodo.txt"), &todo).unwrap();
    std::fs::create_dir_all(d.join("cert")).unwrap();
    let cert = d.join(format!("cert/9689-PRP-3-{AID1}.cbor"));
    std::fs::write(&cert, b"a certificate").unwrap();

    // The server down: nothing handed back, nothing removed, exit 1.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/v5server/");
    let o = prove(d, &url, &["--unreserve", "4253"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("unreachable"), "{}", stderr(&o));
    assert_eq!(worktodo(d), todo, "no line goes before the server took it back");

    // Busy once (retried), then handed back: that line alone goes.
    let fake = Fake::start(port);
    fake.fault("au", &[Fault::Busy]);
    let o = prove(d, &url, &["--unreserve", "4253"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let au = fake.transactions("au");
    assert_eq!(au.iter().map(|q| q["k"].as_str()).collect::<Vec<_>>(), [AID2, AID2], "busy, then taken back");
    assert!(!worktodo(d).contains(AID2) && worktodo(d).contains(AID1), "{}", worktodo(d));

    // Every line: one refusal leaves its line (exit 1); the id that appears twice is sent once;
    // the line without an id has nothing to hand back and goes.
    fake.fault("au", &[Fault::Refuse]);
    let o = prove(d, &url, &["--unreserve-all"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains(&format!("left in place: 'DoubleCheck={AID3},4423,68,1'")), "{}", stderr(&o));
    assert_eq!(worktodo(d), format!("# mine\nDoubleCheck={AID3},4423,68,1\n"));
    let au = fake.transactions("au");
    assert_eq!(au[2..].iter().map(|q| q["k"].as_str()).collect::<Vec<_>>(), [AID3, AID1]);
    // Again: the rest goes; then there is nothing of M4253 left to hand back.
    let o = prove(d, &url, &["--unreserve-all"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(worktodo(d), "# mine\n");
    let o = prove(d, &url, &["--unreserve", "4253"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no line of M4253"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&cert).unwrap(), b"a certificate", "certificates stay");
    assert!(results(d).is_empty(), "nothing was tested");
}

#[test]
fn the_loop_hands_back_what_its_queue_reaches_too_late_once_the_server_takes_it() {
    // A measured speed of 1 ms per iteration of M9689: the line after it waits ~9.7 s, past
    // the limit of 5 s.
    let log =
        "2026-11-27 10:00:00 M9689 PRP-3 iteration 100/9689 (1.03%), 1000.0 us/iter, ETA 9s, res64 0000000000000001\n";
    let todo = format!("PRP={AID1},1,2,9689,-1,75,0\nPRP={AID2},1,2,4447,-1,75,0\n");
    let limit = format!("{}", 5.0 / 86400.0);
    let fake = Fake::start(0);
    let run = |fault: bool| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("progress.log"), log).unwrap();
        std::fs::write(d.join("worktodo.txt"), &todo).unwrap();
        if fault {
            fake.fault("au", &[Fault::Drop]);
        }
        let o = prove(d, &fake.url(), &["--primenet-unreserve-days", &limit]).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        (stderr(&o), results(d).iter().map(|l| l["aid"].as_str().unwrap().to_string()).collect::<Vec<_>>())
    };
    let (err, done) = run(false);
    assert!(err.contains("M4447 PRP-3: the queue ahead of it takes"), "{err}");
    assert_eq!(done, [AID1], "handed back before any test: {err}");
    assert_eq!(fake.transactions("au").iter().map(|q| q["k"].as_str()).collect::<Vec<_>>(), [AID2]);
    // The server not answering: the line stays, and is tested (M9689 done, it is not late).
    let (err, done) = run(true);
    assert!(err.contains("primenet: hand-back:"), "{err}");
    assert_eq!(done, [AID1, AID2], "{err}");
    assert_eq!(fake.transactions("au").len(), 2);
}
