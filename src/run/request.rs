//! One test asked for, by `prove P` or by a work assignment, turned into a [`TestSpec`] in one
//! place: its iterations, its checkpoint layout and replay points, its proof, and the engine
//! decision ([`crate::decide`]) for it. The front ends check their own arguments' wording; what
//! a test needs is settled here.

use crate::decide::{decide, Ask, Work};
use crate::exponent::TestKind;
use crate::run::checkpoints::{default_residue_budget, CheckpointLayout, DEFAULT_REPLAY_POINTS};
use crate::run::test::{LlCheck, ProofSpec, TestSpec};
use crate::run::{Fault, RunOptions, SpotMode};
use anyhow::{bail, Result};
use std::path::PathBuf;
use std::time::Duration;

/// The settings a front end gives every test it runs: the engine asked for, the checks, saves.
#[derive(Debug, Clone)]
pub struct Settings {
    pub ask: Ask,
    pub ll_check: LlCheck,
    pub spot: SpotMode,
    pub spot_threads: usize,
    pub jacobi_threads: usize,
    pub save_every: Duration,
    pub gerbicz_block: u64,
    pub proof_disk_budget: u64,
    /// Testing: faults injected into the run (those beyond its iterations are dropped).
    pub faults: Vec<Fault>,
}

/// One test: which, how far, how it is laid out, and where its state goes.
#[derive(Debug, Clone)]
pub struct Request {
    pub p: u32,
    pub kind: TestKind,
    /// Iterations to run; `None`: the full test (a full PRP test embeds a proof).
    pub iterations: Option<u64>,
    pub shift: u32,
    /// The shift was given, not drawn at random.
    pub shift_fixed: bool,
    /// Checkpoint spacing and the bytes of full residues the certificate holds (`None`: defaults).
    pub checkpoint_every: Option<u64>,
    pub residue_budget: Option<u64>,
    /// Full residues kept in the certificate's sidecar (`None`: the default); with
    /// `certificate` false none are kept.
    pub replay_points: Option<u64>,
    pub certificate: bool,
    /// `--no-proof`: a full PRP test without a proof.
    pub no_proof: bool,
    /// The proof's power (`None`: GIMPS's for p).
    pub proof_power: Option<u32>,
    /// Testing: stop as after Ctrl-C at this iteration.
    pub stop_at: Option<u64>,
    pub state_root: PathBuf,
    pub fresh: bool,
    pub corrupt_proof_point: Option<usize>,
    /// Prefix of the progress labels, the progress log and what a consistent error tells the
    /// user to do to start the test again (see [`TestSpec`]).
    pub tag: String,
    pub progress_log: Option<PathBuf>,
    pub fresh_hint: String,
}

impl Request {
    /// The full test of M_p at `shift` (drawn at random), with defaults for everything else.
    pub fn full(p: u32, kind: TestKind, shift: u32, state_root: PathBuf) -> Request {
        Request {
            p,
            kind,
            iterations: None,
            shift,
            shift_fixed: false,
            checkpoint_every: None,
            residue_budget: None,
            replay_points: None,
            certificate: false,
            no_proof: false,
            proof_power: None,
            stop_at: None,
            state_root,
            fresh: false,
            corrupt_proof_point: None,
            tag: String::new(),
            progress_log: None,
            fresh_hint: String::new(),
        }
    }

    /// The iterations the test runs: `iterations`, at most the full test's.
    pub fn total(&self) -> Result<u64> {
        let full = self.kind.full_iterations(self.p);
        match self.iterations {
            None => Ok(full),
            Some(0) => bail!("--iterations must be at least 1"),
            Some(n) if n > full => {
                bail!(
                    "--iterations {n} exceeds the {full} iterations of a full {} test of M{}",
                    self.kind.worktype(),
                    self.p
                )
            }
            Some(n) => Ok(n),
        }
    }

    /// Does the test embed a PRP proof (a full PRP test, not `--no-proof`)?
    pub fn wants_proof(&self) -> Result<bool> {
        Ok(self.kind == TestKind::Prp && self.total()? == self.kind.full_iterations(self.p) && !self.no_proof)
    }

    /// The test's spec under `settings`: its layout, its options and the engine decided for it.
    pub fn spec(self, settings: &Settings) -> Result<TestSpec> {
        let (p, kind, total) = (self.p, self.kind, self.total()?);
        let want_proof = self.wants_proof()?;
        let budget = self.residue_budget.unwrap_or_else(|| default_residue_budget(p, want_proof));
        let points = match self.certificate {
            true => self.replay_points.unwrap_or(if want_proof { 0 } else { DEFAULT_REPLAY_POINTS }),
            false => 0,
        };
        let layout = CheckpointLayout::choose(p, total.max(1), self.checkpoint_every, budget)?
            .with_replay_points(total.max(1), points);
        let doubled = kind == TestKind::Ll && settings.ll_check.doubles(p);
        let decision = decide(&settings.ask, &Work::test(p, kind, total, doubled))?;
        Ok(TestSpec {
            p,
            kind,
            opts: RunOptions {
                shift_fixed: self.shift_fixed,
                gerbicz_block: settings.gerbicz_block,
                save_every: settings.save_every,
                spot: settings.spot,
                spot_threads: settings.spot_threads,
                jacobi_threads: settings.jacobi_threads,
                faults: settings.faults.iter().filter(|f| f.iteration <= total).copied().collect(),
                stop_at: self.stop_at,
                ..RunOptions::simple(total, layout, self.shift)
            },
            decision,
            ll_check: settings.ll_check,
            state_root: self.state_root,
            fresh: self.fresh,
            proof: want_proof.then_some(ProofSpec { power: self.proof_power, disk_budget: settings.proof_disk_budget }),
            corrupt_proof_point: self.corrupt_proof_point,
            tag: self.tag,
            progress_log: self.progress_log,
            fresh_hint: self.fresh_hint,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings {
            ask: Ask::cpu(),
            ll_check: LlCheck::Jacobi,
            spot: SpotMode::Off,
            spot_threads: 0,
            jacobi_threads: 1,
            save_every: Duration::from_secs(60),
            gerbicz_block: 1000,
            proof_disk_budget: 1 << 30,
            faults: vec![Fault { iteration: 5000, word: 0, bit: 0 }, Fault { iteration: 20_000, word: 0, bit: 0 }],
        }
    }

    #[test]
    fn a_full_prp_test_has_a_proof_and_a_partial_one_none() {
        let r = Request::full(9689, TestKind::Prp, 3, PathBuf::from("s"));
        let spec = r.clone().spec(&settings()).unwrap();
        assert!(spec.proof.is_some() && spec.opts.total == 9689);
        // Faults beyond the test are dropped.
        assert_eq!(spec.opts.faults.len(), 1);
        let spec = Request { iterations: Some(100), ..r.clone() }.spec(&settings()).unwrap();
        assert!(spec.proof.is_none() && spec.opts.total == 100);
        assert!(Request { no_proof: true, ..r.clone() }.spec(&settings()).unwrap().proof.is_none());
        let e = Request { iterations: Some(9690), ..r.clone() }.spec(&settings()).unwrap_err().to_string();
        assert!(e.contains("exceeds the 9689 iterations"), "{e}");
        assert!(Request { iterations: Some(0), ..r }.spec(&settings()).is_err());
    }

    #[test]
    fn replay_points_only_with_a_certificate() {
        let r = Request::full(9689, TestKind::Ll, 3, PathBuf::from("s"));
        let none = r.clone().spec(&settings()).unwrap();
        let with = Request { certificate: true, ..r }.spec(&settings()).unwrap();
        assert_eq!(none.opts.layout.every, with.opts.layout.every);
        assert_ne!(none.opts.layout, with.opts.layout);
    }
}
