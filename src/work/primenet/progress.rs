//! Progress reports (`ap`): a thread that, every `progress_every`, tells PrimeNet how far the
//! test in progress is and when it will end, as prime95 does between check-ins. The numbers are
//! the run's own: the newest checkpoint line of `progress.log` for the assignment (iteration,
//! total, µs per iteration, measured in the run), so the ETA is the remaining iterations at the
//! measured speed. A failed report is only noted; the next one replaces it.

use super::http::Http;
use super::protocol::{self, code, Answer};
use super::Config;
use crate::exponent::TestKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The assignment being run: (assignment id, exponent, kind).
pub type Current = Arc<Mutex<Option<(String, u32, TestKind)>>>;

/// (iteration, total, µs per iteration) of the newest progress line of M`p` `kind` in `log`.
pub fn latest(log: &str, p: u32, kind: TestKind) -> Option<(u64, u64, f64)> {
    let head = format!("M{p} {} iteration ", kind.worktype());
    log.lines().rev().find_map(|l| {
        let rest = &l[l.find(&head)? + head.len()..];
        let (done, rest) = rest.split_once('/')?;
        let (total, rest) = rest.split_once(' ')?;
        let us = rest.split(", ").find_map(|f| f.strip_suffix(" us/iter"))?;
        Some((done.parse().ok()?, total.parse().ok()?, us.trim().parse().ok()?))
    })
}

/// `ap`'s parameters for M`p` at `(done, total, us)`.
pub fn params(
    aid: &str,
    kind: TestKind,
    (done, total, us): (u64, u64, f64),
    every: Duration,
) -> Vec<(&'static str, String)> {
    let percent = 100.0 * done as f64 / total.max(1) as f64;
    let eta = (total.saturating_sub(done) as f64 * us / 1e6).ceil() as u64;
    vec![
        ("k", aid.to_string()),
        ("stage", if kind == TestKind::Ll { "LL" } else { "PRP" }.into()),
        ("c", "0".into()),
        ("p", format!("{percent:.4}")),
        ("d", every.as_secs().max(3600).to_string()),
        ("e", eta.max(1).to_string()),
    ]
}

/// Start the thread; it ends when `stop` is set.
pub fn spawn(
    cfg: Config,
    dir: &Path,
    progress_log: PathBuf,
    current: Current,
    stop: Arc<AtomicBool>,
) -> JoinHandle<()> {
    let dir = dir.to_path_buf();
    std::thread::spawn(move || {
        let http = Http::new(cfg.timeout);
        let mut next = Instant::now() + cfg.progress_every;
        while !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(50));
            if Instant::now() < next {
                continue;
            }
            next = Instant::now() + cfg.progress_every;
            let Some((aid, p, kind)) = current.lock().map(|c| c.clone()).unwrap_or(None) else { continue };
            let (Some(guid), Ok(log)) = (super::registered_guid(&dir), std::fs::read_to_string(&progress_log)) else {
                continue;
            };
            let Some(at) = latest(&log, p, kind) else { continue };
            let query = protocol::query("ap", &guid, params(&aid, kind, at, cfg.progress_every));
            match http.get(&cfg.url, &query).map(|t| Answer::parse(&t)) {
                Ok(Ok(a)) if a.code() == code::OK => {}
                Ok(Ok(a)) => eprintln!("primenet: progress of M{p}: {}", a.describe()),
                Ok(Err(why)) => eprintln!("primenet: progress of M{p}: {why}"),
                Err(e) => eprintln!("primenet: progress of M{p}: {e}"),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_progress_line_gives_percent_and_eta() {
        let log = "2026-11-26 07:36:38 M4447 PRP-3 iteration 1000/4447 (22.49%), 40.0 us/iter, ETA 0s, res64 4C\n\
                   2026-11-26 07:36:39 worker 0: M4447 PRP-3 iteration 2000/4447 (44.97%), 50.0 us/iter, ETA 0s, res64 4D\n\
                   2026-11-26 07:36:40 M4423 LL iteration 7/4421 (0.16%), 10.0 us/iter, ETA 0s, res64 00\n";
        assert_eq!(latest(log, 4447, TestKind::Prp), Some((2000, 4447, 50.0)));
        assert_eq!(latest(log, 4423, TestKind::Ll), Some((7, 4421, 10.0)));
        assert_eq!(latest(log, 4423, TestKind::Prp), None);
        let q = params("K", TestKind::Prp, (2000, 4447, 50.0), Duration::from_secs(7200));
        let get = |k: &str| q.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_str());
        assert_eq!(
            (get("p"), get("e"), get("d"), get("stage")),
            (Some("44.9741"), Some("1"), Some("7200"), Some("PRP"))
        );
        let q = params("K", TestKind::Ll, (0, 100_000_000, 1000.0), Duration::from_secs(60));
        let get = |k: &str| q.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_str());
        assert_eq!((get("e"), get("d")), (Some("100000"), Some("3600")));
    }
}
