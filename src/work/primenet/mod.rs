//! The built-in PrimeNet client of `prove --work-dir DIR --primenet --user NAME`: it registers
//! the computer (`uc`, then `po` with the work preference), keeps the worktodo file stocked with
//! assignments (`ga`; one it cannot run is handed back at once with `au`), reports each result
//! line once written (`ar`, after the line's certificate passed [`check::check_line`]), uploads
//! each PRP proof once its result is accepted ([`proofs`]), and reports progress and ETA of the
//! test in progress (`ap`, [`progress`]), and hands back what it cannot finish in time or is told
//! to give up (`au`, [`unreserve`]). While there is work to do, a call that finds the
//! server down or busy is not retried (the tests go on; a result not sent stays in the queue,
//! [`outbox`], for the next flush or start); with nothing left to do it is retried with a
//! doubling pause.
//!
//! - [`protocol`]: the v5 requests and answers; [`http`]: the transport;
//! - [`outbox`]: which results are sent; [`check`]: what must hold before one is;
//! - [`proofs`]: the proof upload; [`progress`]: the `ap` thread; [`unreserve`]: `au`.
//!
//! The registration (the computer's GUID) is kept in `DIR/primenet.json`; PrimeNet traffic of the
//! workers of one directory is serialised by a lock on `DIR/primenet.lock`.

pub mod check;
pub mod http;
pub mod outbox;
pub mod progress;
pub mod proofs;
pub mod protocol;
pub mod unreserve;

use super::claim::DirLock;
use super::worktodo::{self, Line};
use super::Paths;
use crate::decide::Ask;
use http::{Http, NetError};
use protocol::{code, Answer, WorkPref};
use serde_json::{json, Value};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// PrimeNet's v5 server.
pub const DEFAULT_URL: &str = "https://v5.mersenne.org/v5server/";
/// The site the proofs go to (`proof_upload/`) when the server is the default one.
pub const DEFAULT_SITE: &str = "https://www.mersenne.org/";
pub const STATE_FILE: &str = "primenet.json";
pub const LOCK_FILE: &str = "primenet.lock";

/// How to talk to PrimeNet.
#[derive(Debug, Clone)]
pub struct Config {
    /// The v5 server (`…/v5server/`).
    pub url: String,
    /// Where `proof_upload/` is: PrimeNet's site for the default server, else the server's origin.
    pub site: String,
    pub user: String,
    pub computer: String,
    pub pref: WorkPref,
    /// Keep this many unfinished assignments in the worktodo file (the running one included).
    pub queue: usize,
    pub timeout: Duration,
    /// Tries of one call after the first while the server is down or busy, the first pause
    /// `backoff`, doubling.
    pub retries: u32,
    pub backoff: Duration,
    pub progress_every: Duration,
    /// Hand back an assignment not yet begun that the queue ahead of it would take longer than
    /// this to reach ([`unreserve`]).
    pub unreserve_after: Duration,
    /// Testing: abort after the server answered a result, before it is marked sent.
    pub crash_after_send: bool,
}

impl Config {
    /// The server's address and the proof site from `--primenet-url` (None: PrimeNet's).
    pub fn addresses(url: Option<&str>) -> Result<(String, String), String> {
        let Some(url) = url else { return Ok((DEFAULT_URL.into(), DEFAULT_SITE.into())) };
        let rest = url
            .strip_prefix("https://")
            .or_else(|| url.strip_prefix("http://"))
            .ok_or(format!("--primenet-url {url}: expected an http:// or https:// address"))?;
        let host = rest.split('/').next().unwrap_or_default();
        if host.is_empty() {
            return Err(format!("--primenet-url {url}: no host"));
        }
        let scheme = &url[..url.len() - rest.len()];
        let server = if url.ends_with('/') { url.to_string() } else { format!("{url}/") };
        Ok((server, format!("{scheme}{host}/")))
    }
}

/// The client of one work directory.
pub struct Client {
    cfg: Config,
    http: Http,
    dir: PathBuf,
    guid: Option<String>,
    /// Retry calls while the server is down (nothing else to do), or try once.
    patient: bool,
    /// The engine the work loop asked for, which checks the proofs before they are sent.
    ask: Ask,
}

/// The registration kept in `DIR/primenet.json`.
fn read_state(dir: &Path) -> Value {
    std::fs::read_to_string(dir.join(STATE_FILE)).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or(json!({}))
}

/// The computer's GUID once registered (for [`progress`]).
pub fn registered_guid(dir: &Path) -> Option<String> {
    read_state(dir)["guid"].as_str().map(String::from)
}

fn random_hex() -> String {
    let mut b = [0u8; 16];
    getrandom::getrandom(&mut b).expect("the OS random source");
    hex::encode_upper(b)
}

fn first_line_of(path: &str, prefix: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find(|l| l.starts_with(prefix)).and_then(|l| l.split_once(':')).map(|(_, v)| v.trim().to_string())
}

/// The serialising lock of PrimeNet traffic in `dir`.
struct NetLock(#[allow(dead_code)] File);

impl NetLock {
    fn take(dir: &Path) -> std::io::Result<NetLock> {
        let f = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(dir.join(LOCK_FILE))?;
        f.lock()?;
        Ok(NetLock(f))
    }
}

impl Client {
    pub fn new(cfg: Config, dir: &Path, ask: Ask) -> Client {
        let guid = registered_guid(dir);
        Client { http: Http::new(cfg.timeout), cfg, dir: dir.to_path_buf(), guid, patient: false, ask }
    }

    /// One transaction, retried while the server is down or busy, and after registering again
    /// when the server has forgotten the computer.
    fn call(&mut self, t: &str, rest: Vec<(&'static str, String)>) -> Result<Answer, NetError> {
        let mut pause = self.cfg.backoff;
        let mut registered_again = false;
        let retries = if self.patient { self.cfg.retries } else { 0 };
        for attempt in 0..=retries {
            if attempt > 0 {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_secs(600));
            }
            let guid = self.guid.clone().unwrap_or_default();
            let text = match self.http.get(&self.cfg.url, &protocol::query(t, &guid, rest.clone())) {
                Ok(text) => text,
                Err(NetError::Down(why)) => {
                    if attempt < retries {
                        eprintln!("primenet: {t}: {why}; trying again in {:.1} s", pause.as_secs_f64());
                    }
                    continue;
                }
                Err(e) => return Err(e),
            };
            let answer = Answer::parse(&text).map_err(NetError::Refused)?;
            match answer.code() {
                code::SERVER_BUSY => {
                    eprintln!("primenet: {t}: {}; trying again", answer.describe());
                    continue;
                }
                code::UNREGISTERED_CPU | code::STALE_CPU_INFO if t != "uc" && !registered_again => {
                    registered_again = true;
                    self.register()?;
                    continue;
                }
                _ => return Ok(answer),
            }
        }
        Err(NetError::Down(format!("{t}: no answer after {} tries", retries + 1)))
    }

    fn ok(answer: Answer) -> Result<Answer, NetError> {
        match answer.code() {
            code::OK => Ok(answer),
            _ => Err(NetError::Refused(answer.describe())),
        }
    }

    /// Register the computer (`uc`) and set the work preference (`po`), keeping the GUID.
    fn register(&mut self) -> Result<(), NetError> {
        let mut state = read_state(&self.dir);
        let guid = state["guid"].as_str().map(String::from).unwrap_or_else(random_hex);
        let hardware = state["hardware_guid"].as_str().map(String::from).unwrap_or_else(random_hex);
        self.guid = Some(guid.clone());
        let cpu = first_line_of("/proc/cpuinfo", "model name").unwrap_or_else(|| "unknown processor".into());
        let cores = crate::host::cores();
        let mem_mib = first_line_of("/proc/meminfo", "MemTotal")
            .and_then(|v| v.split_whitespace().next().and_then(|k| k.parse::<u64>().ok()))
            .map_or(1024, |kib| kib / 1024);
        let arch = if cfg!(target_pointer_width = "64") { "64" } else { "" };
        let os = match std::env::consts::OS {
            "linux" => "Linux",
            "macos" => "Mac OS X",
            "windows" => "Windows",
            other => other,
        };
        let computer: String = self.cfg.computer.chars().take(20).collect();
        let uc = vec![
            ("hg", hardware.clone()),
            ("wg", String::new()),
            // Our own name and version: this program does not pass itself off as another.
            ("a", format!("{os}{arch},mersenne-cert,v{}", crate::VERSION)),
            ("c", format!("{cpu:.64}")),
            ("f", String::new()),
            ("L1", "32".into()),
            ("L2", "1024".into()),
            ("np", cores.to_string()),
            ("hp", "1".into()),
            ("m", mem_mib.to_string()),
            ("s", "1000".into()),
            ("h", "24".into()),
            ("r", "1000".into()),
            ("u", self.cfg.user.clone()),
            ("cn", computer),
        ];
        let answer = Self::ok(self.call("uc", uc)?)?;
        let guid = answer.get("g").filter(|g| !g.is_empty()).unwrap_or(&guid).to_string();
        self.guid = Some(guid.clone());
        state = json!({
            "guid": guid,
            "hardware_guid": hardware,
            "user": answer.get("u").unwrap_or(&self.cfg.user),
            "computer": answer.get("cn").unwrap_or(&self.cfg.computer),
            "server": self.cfg.url,
        });
        crate::fsutil::write_atomic(&self.dir.join(STATE_FILE), format!("{state:#}\n").as_bytes(), 0o644)
            .map_err(|e| NetError::Refused(format!("cannot write {STATE_FILE}: {e}")))?;
        let po = vec![
            ("c", String::new()),
            ("w", self.cfg.pref.number().to_string()),
            ("nw", "1".into()),
            ("DaysOfWork", "1".into()),
        ];
        Self::ok(self.call("po", po)?)?;
        eprintln!(
            "primenet: computer {guid} registered for {} (work preference {})",
            self.cfg.user,
            self.cfg.pref.number()
        );
        Ok(())
    }

    /// Register when not yet registered, or when the user or computer name changed.
    pub fn ensure_registered(&mut self) -> Result<(), NetError> {
        let state = read_state(&self.dir);
        let same = state["server"] == self.cfg.url.as_str()
            && state["user"] == self.cfg.user.as_str()
            && state["computer"] == self.cfg.computer.as_str();
        if self.guid.is_some() && same {
            return Ok(());
        }
        self.register()
    }

    /// Stock the shared worktodo file with assignments until it holds `queue` unfinished ones;
    /// an assignment this program cannot run is handed back (`au`). Returns how many were added.
    /// Patient (retrying while the server is down) only when the file has no work left.
    pub fn fetch(&mut self, paths: &Paths) -> Result<usize, NetError> {
        let work = |paths: &Paths| {
            let lines = worktodo::read_lines(&paths.shared.worktodo).unwrap_or_default();
            lines.iter().filter(|l| matches!(worktodo::parse_line(l), Line::Work(_))).count()
        };
        self.patient = work(paths) == 0;
        self.ensure_registered()?;
        let _net = NetLock::take(&self.dir).map_err(|e| NetError::Refused(format!("{LOCK_FILE}: {e}")))?;
        let mut added = 0;
        loop {
            let queued = work(paths);
            self.patient = queued == 0;
            if queued >= self.cfg.queue {
                return Ok(added);
            }
            let answer = self.call("ga", vec![("c", "0".into())])?;
            if answer.code() == code::NO_ASSIGNMENT {
                return Ok(added);
            }
            let answer = Self::ok(answer)?;
            let line = protocol::assignment_line(&answer);
            match line.as_deref().map(worktodo::parse_line) {
                Ok(Line::Work(_)) => {
                    let line = line.unwrap_or_default();
                    append_line(paths, &line).map_err(|e| NetError::Refused(format!("cannot add '{line}': {e}")))?;
                    eprintln!("primenet: new assignment {line}");
                    added += 1;
                }
                other => {
                    let why = match other {
                        Ok(Line::Unusable(why)) => why,
                        Err(why) => why.clone(),
                        _ => "not a test".into(),
                    };
                    let aid = answer.get("k").unwrap_or_default().to_string();
                    eprintln!("primenet: handing back assignment {aid}: {why}");
                    self.unreserve(&aid)?;
                }
            }
        }
    }

    /// Hand an assignment back (`au`).
    pub fn unreserve(&mut self, aid: &str) -> Result<(), NetError> {
        let answer = self.call("au", vec![("k", aid.to_string())])?;
        match answer.code() {
            code::OK | code::INVALID_ASSIGNMENT_KEY => Ok(()),
            _ => Err(NetError::Refused(answer.describe())),
        }
    }

    /// Send every unsent result (each checked first) and upload the proofs of the accepted
    /// ones; `patient`: retry while the server is down (when there is nothing else to do).
    /// Returns the number of results still unsent (the server down).
    pub fn flush(&mut self, paths: &Paths, patient: bool) -> Result<usize, NetError> {
        self.patient = patient;
        let outbox = outbox::Outbox::new(&self.dir);
        let io = |e: std::io::Error| NetError::Refused(format!("{}: {e}", outbox::SENT_FILE));
        if outbox.pending().map_err(io)?.is_empty() {
            return self.upload_proofs(paths).map(|()| 0);
        }
        self.ensure_registered()?;
        let _net = NetLock::take(&self.dir).map_err(|e| NetError::Refused(format!("{LOCK_FILE}: {e}")))?;
        let pending = outbox.pending().map_err(io)?;
        for (i, line) in pending.iter().enumerate() {
            let p = line["exponent"].as_u64().unwrap_or(0);
            if let Err(why) = check::check_line(&paths.cert, &paths.proof, line, &self.ask) {
                eprintln!("primenet: M{p}: result withheld, it would not pass verify: {why}");
                outbox.mark(line, &format!("withheld: {why}")).map_err(io)?;
                continue;
            }
            let params = protocol::result_params(line).map_err(NetError::Refused)?;
            let answer = match self.call("ar", params) {
                Ok(a) => a,
                Err(NetError::Down(why)) => {
                    eprintln!("primenet: {} result(s) left to send later: {why}", pending.len() - i);
                    return Ok(pending.len() - i);
                }
                Err(e) => return Err(e),
            };
            if self.cfg.crash_after_send {
                eprintln!("testing: crashing at AfterSend");
                std::process::abort();
            }
            let outcome = match answer.code() {
                code::OK => "accepted".to_string(),
                // A second report of an assignment (after a kill before the mark): it has it.
                code::INVALID_ASSIGNMENT_KEY | code::WORK_NO_LONGER_NEEDED if line.get("aid").is_some() => {
                    format!("known: {}", answer.describe())
                }
                _ => format!("rejected: {}", answer.describe()),
            };
            eprintln!("primenet: M{p} {}: {outcome}", line["worktype"].as_str().unwrap_or_default());
            outbox.mark(line, &outcome).map_err(io)?;
        }
        drop(_net);
        self.upload_proofs(paths)?;
        Ok(0)
    }

    /// Upload the proof of each result the server has, then move it to `proof/sent/` (so that
    /// neither this client nor AutoPrimeNet uploads it again).
    fn upload_proofs(&mut self, paths: &Paths) -> Result<(), NetError> {
        let outbox = outbox::Outbox::new(&self.dir);
        let answered = outbox.answered().unwrap_or_default();
        let has = |id: &str| answered.iter().any(|(a, o)| a == id && (o == "accepted" || o.starts_with("known")));
        let results = std::fs::read_to_string(&paths.results).unwrap_or_default();
        for line in results.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()) {
            if line.get("proof").is_none() || !outbox::line_id(&line).is_some_and(has) {
                continue;
            }
            let Some((path, bytes)) = check::proof_file(&paths.proof, &line) else { continue };
            let p = line["exponent"].as_u64().unwrap_or(0) as u32;
            let _net = NetLock::take(&self.dir).map_err(|e| NetError::Refused(format!("{LOCK_FILE}: {e}")))?;
            let mut pause = self.cfg.backoff;
            let mut tries = 0;
            loop {
                match proofs::upload(&self.http, &self.cfg.site, &self.cfg.user, p, &bytes) {
                    Ok(()) => break,
                    Err(NetError::Down(why)) if self.patient && tries < self.cfg.retries => {
                        eprintln!("primenet: proof of M{p}: {why}; trying again in {:.1} s", pause.as_secs_f64());
                        std::thread::sleep(pause);
                        pause = (pause * 2).min(Duration::from_secs(600));
                        tries += 1;
                    }
                    Err(e) => {
                        eprintln!("primenet: proof {} not uploaded ({e}); it stays for the next try", path.display());
                        return Err(e);
                    }
                }
            }
            let sent = paths.proof.join("sent");
            let moved = std::fs::create_dir_all(&sent)
                .and_then(|()| std::fs::rename(&path, sent.join(path.file_name().unwrap_or_default())));
            moved
                .map_err(|e| NetError::Refused(format!("cannot move {} to {}: {e}", path.display(), sent.display())))?;
            eprintln!("primenet: proof of M{p} uploaded ({} bytes)", bytes.len());
        }
        Ok(())
    }
}

/// Append `line` to the shared worktodo file, under the directory lock and AutoPrimeNet's.
fn append_line(paths: &Paths, line: &str) -> std::io::Result<()> {
    let _g = DirLock::take(&paths.dir)?;
    let file = &paths.shared.worktodo;
    let _apn = super::apn_lock::ApnLock::take(file)?;
    let mut text = std::fs::read_to_string(file).or_else(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Ok(String::new()),
        _ => Err(e),
    })?;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(line);
    text.push('\n');
    crate::fsutil::write_atomic(file, text.as_bytes(), 0o644)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proof_site_is_primenets_or_the_servers_origin() {
        assert_eq!(Config::addresses(None).unwrap(), (DEFAULT_URL.to_string(), DEFAULT_SITE.to_string()));
        assert_eq!(
            Config::addresses(Some("http://127.0.0.1:8080/v5server")).unwrap(),
            ("http://127.0.0.1:8080/v5server/".to_string(), "http://127.0.0.1:8080/".to_string())
        );
        assert_eq!(Config::addresses(Some("https://example.org/")).unwrap().1, "https://example.org/");
        assert!(Config::addresses(Some("ftp://x/")).is_err());
        assert!(Config::addresses(Some("http:///v5")).is_err());
    }
}
