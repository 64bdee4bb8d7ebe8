//! Handing assignments back to PrimeNet (`au`), as prime95 and AutoPrimeNet do: every assignment
//! of the work directory (`--unreserve-all`), those of one exponent (`--unreserve P`), and, in
//! the work loop, one not yet started that the queue would reach too late: prime95's rule
//! (commonc.c, `UnreserveDays`, 30 days past the days of work it asks for) gives back work not
//! begun that lies more than that far down the queue; AutoPrimeNet only reports the queue's
//! ETA. Here the limit is `--primenet-unreserve-days` (default 31: the one day of work this
//! client asks for, and prime95's 30), the queue's time the remaining iterations of each line
//! ahead at the speed measured in this directory (the newest line of `progress.log`, scaled to
//! each exponent as a transform's cost, p·log p per iteration).
//!
//! A line goes from its file only after the server took the assignment back (or said it has no
//! such assignment), under the directory lock and AutoPrimeNet's, and under the test's claim: a
//! line a live worker is testing is left, said why. A line without an assignment id has nothing
//! to hand back: `--unreserve-all` and `--unreserve P` remove it (as AutoPrimeNet does), the
//! loop leaves it. Certificates, proofs and saved states stay.

use super::super::claim::{self, DirLock};
use super::super::worktodo::{self, Assignment, Line};
use super::super::{Paths, Source};
use super::http::NetError;
use super::{Client, Config};
use crate::decide::Ask;
use crate::run::state::StateStore;
use std::collections::HashSet;
use std::path::Path;

/// Which assignments `--unreserve-all` or `--unreserve P` hands back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    All,
    Exponent(u32),
}

impl Pick {
    fn takes(self, a: &Assignment) -> bool {
        match self {
            Pick::All => true,
            Pick::Exponent(p) => a.p == p,
        }
    }
}

/// What became of the lines a hand-back looked at.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HandedBack {
    /// Lines removed (their assignment handed back, or without one).
    pub removed: Vec<String>,
    /// Lines left, each with why.
    pub left: Vec<(String, String)>,
}

/// How one line fared.
enum Fate {
    Removed,
    Left(String),
}

/// Seconds per iteration of M`p`, from `us` µs per iteration measured on M`at`: a transform's
/// cost, p·log p.
fn seconds_per_iteration(p: u32, (at, us): (u32, f64)) -> f64 {
    let cost = |p: u32| p as f64 * (p.max(2) as f64).log2();
    us * 1e-6 * cost(p) / cost(at)
}

/// (exponent, µs per iteration) of the newest progress line of `log`
/// (`… M<p> <worktype> iteration i/n (…), <us> us/iter, …`).
pub fn measured_speed(log: &str) -> Option<(u32, f64)> {
    log.lines().rev().find_map(|l| {
        let at = l.find(" iteration ")?;
        let p = l[..at].rsplit(' ').nth(1)?.strip_prefix('M')?.parse().ok()?;
        let us = l[at..].split(", ").find_map(|f| f.strip_suffix(" us/iter"))?.trim().parse().ok()?;
        Some((p, us))
    })
}

/// Has the test of `a` (in `source`) begun: a saved state, or a claim of a live worker?
fn started(source: &Source, a: &Assignment) -> bool {
    let store = StateStore::at(&source.state, a.p, a.kind);
    let saved = std::fs::read_dir(store.dir()).is_ok_and(|mut d| d.next().is_some());
    saved || store.lock_path().exists()
}

impl Client {
    /// Hand back assignment `a` of `source` and remove its line, under the test's claim; a line
    /// whose assignment id `done` holds (handed back already) only goes from the file.
    fn hand_back(
        &mut self,
        paths: &Paths,
        source: &Source,
        a: &Assignment,
        done: &mut HashSet<String>,
    ) -> Result<Fate, NetError> {
        let file = source.worktodo.display();
        let dir_lock = || DirLock::take(&paths.dir);
        // Claims are taken under the directory lock (claim.rs); the network call is made without it.
        let claimed = dir_lock()
            .map_err(|e| e.to_string())
            .and_then(|_g| claim::try_claim(&StateStore::at(&source.state, a.p, a.kind)).map_err(|e| e.to_string()));
        let lock = match claimed {
            Ok(Some(lock)) => lock,
            Ok(None) => return Ok(Fate::Left("a running worker is testing it; stop it first".into())),
            Err(why) => return Ok(Fate::Left(why)),
        };
        let told = match a.aid.as_deref().filter(|aid| !done.contains(*aid)) {
            Some(aid) => self.unreserve(aid).map(|()| Some(aid.to_string())),
            None => Ok(None),
        };
        let g = match dir_lock() {
            Ok(g) => g,
            Err(e) => return Ok(Fate::Left(format!("cannot lock {}: {e}", paths.dir.display()))),
        };
        let update = match &told {
            Ok(_) => worktodo::find_current(&source.worktodo, a)
                .and_then(|now| now.map_or(Ok(false), |now| worktodo::remove_line(&source.worktodo, &now.line))),
            Err(_) => Ok(false),
        };
        // The claim goes either way; the lock file too, so that the line does not look begun.
        let released = claim::release_finished(&g, lock);
        match told {
            Err(NetError::Refused(why)) => Ok(Fate::Left(why)),
            Err(down) => Err(down),
            Ok(aid) => {
                done.extend(aid);
                match update.and(released) {
                    Ok(_) => Ok(Fate::Removed),
                    Err(e) => Ok(Fate::Left(format!("handed back, but {file} could not be updated: {e}"))),
                }
            }
        }
    }

    /// `--unreserve-all`, `--unreserve P`: hand back the picked assignments of every worktodo
    /// file of the worker, retrying while the server is down. The server down for good leaves
    /// the rest of the lines, each said.
    pub fn unreserve_picked(&mut self, paths: &Paths, pick: Pick) -> Result<HandedBack, NetError> {
        self.patient = true;
        self.ensure_registered()?;
        let _net =
            super::NetLock::take(&self.dir).map_err(|e| NetError::Refused(format!("{}: {e}", super::LOCK_FILE)))?;
        let mut out = HandedBack::default();
        let mut done = HashSet::new();
        let mut down: Option<String> = None;
        for source in paths.sources() {
            let lines = worktodo::read_lines(&source.worktodo)
                .map_err(|e| NetError::Refused(format!("cannot read {}: {e}", source.worktodo.display())))?;
            for raw in lines {
                let Line::Work(a) = worktodo::parse_line(&raw) else { continue };
                if !pick.takes(&a) {
                    continue;
                }
                if let Some(why) = &down {
                    out.left.push((raw, format!("not handed back: {why}")));
                    continue;
                }
                match self.hand_back(paths, source, &a, &mut done) {
                    Ok(Fate::Removed) => {
                        eprintln!("primenet: M{} {}: handed back; '{raw}' removed", a.p, a.kind.worktype());
                        out.removed.push(raw);
                    }
                    Ok(Fate::Left(why)) => out.left.push((raw, why)),
                    Err(e) => {
                        down = Some(e.to_string());
                        out.left.push((raw, format!("not handed back: {e}")));
                    }
                }
            }
        }
        Ok(out)
    }

    /// The loop's rule: hand back each assignment not yet begun that the queue ahead of it (the
    /// worker's own file, then the shared one, in order) would take longer than the configured
    /// limit to reach at the speed measured in `progress.log`; nothing without a measured speed.
    /// Returns the lines removed; the server down leaves them for the next pass.
    pub fn unreserve_late(&mut self, paths: &Paths) -> Result<Vec<String>, NetError> {
        let limit = self.cfg.unreserve_after;
        let Some(log) = std::fs::read_to_string(&paths.progress_log).ok() else { return Ok(Vec::new()) };
        let Some(speed) = measured_speed(&log) else { return Ok(Vec::new()) };
        let mut ahead = 0.0;
        let mut late = Vec::new();
        for source in paths.sources() {
            for raw in worktodo::read_lines(&source.worktodo).unwrap_or_default() {
                let Line::Work(a) = worktodo::parse_line(&raw) else { continue };
                let begun = started(source, &a);
                if !begun && a.aid.is_some() && ahead > limit.as_secs_f64() {
                    late.push((source.clone(), a, ahead));
                    continue;
                }
                let full = a.kind.full_iterations(a.p);
                let left = match super::progress::latest(&log, a.p, a.kind) {
                    Some((done, total, _)) if begun && total == full => full.saturating_sub(done),
                    _ => full,
                };
                ahead += left as f64 * seconds_per_iteration(a.p, speed);
            }
        }
        let mut removed = Vec::new();
        if late.is_empty() {
            return Ok(removed);
        }
        self.ensure_registered()?;
        let _net =
            super::NetLock::take(&self.dir).map_err(|e| NetError::Refused(format!("{}: {e}", super::LOCK_FILE)))?;
        let mut done = HashSet::new();
        for (source, a, ahead) in late {
            eprintln!(
                "primenet: M{} {}: the queue ahead of it takes ~{:.2} days ({ahead:.0} s) at the measured speed, more than --primenet-unreserve-days ({:.0} s): handing it back",
                a.p,
                a.kind.worktype(),
                ahead / 86400.0,
                limit.as_secs_f64()
            );
            match self.hand_back(paths, &source, &a, &mut done)? {
                Fate::Removed => {
                    eprintln!("primenet: M{} {}: handed back; '{}' removed", a.p, a.kind.worktype(), a.line);
                    removed.push(a.line);
                }
                Fate::Left(why) => eprintln!("primenet: M{} {}: not handed back: {why}", a.p, a.kind.worktype()),
            }
        }
        Ok(removed)
    }
}

/// `prove --work-dir DIR --primenet --unreserve-all | --unreserve P`: the results not yet sent are
/// reported first (as AutoPrimeNet does), then the picked assignments of worker `worker`'s files
/// handed back; the proofs of those results are checked on the engine `ask` decides.
pub fn run(cfg: Config, dir: &Path, worker: Option<usize>, ask: Ask, pick: Pick) -> anyhow::Result<HandedBack> {
    let paths = Paths::new(dir, worker)?;
    let mut net = Client::new(cfg, &paths.dir, ask);
    let unsent = net.flush(&paths, true)?;
    if unsent > 0 {
        eprintln!("primenet: {unsent} result(s) not sent yet; they stay queued for the next run");
    }
    Ok(net.unreserve_picked(&paths, pick)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_speed_is_the_newest_progress_line_scaled_as_p_log_p() {
        let log = "2026-11-26 07:36:38 M4447 PRP-3 iteration 1000/4447 (22.49%), 40.0 us/iter, ETA 0s, res64 4C\n\
                   2026-11-26 07:36:39 worker 0: M9689 LL iteration 2000/9687 (20.65%), 50.0 us/iter, ETA 0s, res64 4D\n\
                   2026-11-26 07:36:40 M9689 LL: done\n";
        assert_eq!(measured_speed(log), Some((9689, 50.0)));
        assert_eq!(measured_speed("nothing here\n"), None);
        let same = seconds_per_iteration(9689, (9689, 50.0));
        assert!((same - 50e-6).abs() < 1e-12);
        // Twice the exponent: a little more than twice the time per iteration.
        let double = seconds_per_iteration(2 * 9689, (9689, 50.0)) / same;
        assert!(double > 2.0 && double < 2.2, "{double}");
    }
}
