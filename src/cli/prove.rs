//! `prove`'s command line: its arguments as clap parses them, and their values checked and
//! turned into the run's options and [`Settings`] ([`super::prove_run`] checks them against each
//! other and runs them).

use super::{ArithArg, EngineArg};
use crate::decide::{Ask, Devices};
use crate::host;
use crate::run::request::Settings;
use crate::run::{gerbicz, test, Fault, SpotMode};
use anyhow::{anyhow, bail, Context, Result};
use std::path::PathBuf;
use std::time::Duration;

/// Default disk budget for the proof points of a run: 32 GiB.
pub const DEFAULT_PROOF_DISK_BUDGET: u64 = 32 << 30;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Spot {
    /// No spot checks.
    Off,
    /// As many as spare CPU threads keep up with, never stalling the engine.
    Sample,
    /// Every iteration (the engine waits for the CPU when needed).
    Full,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LlCheck {
    /// `double` below the size where it is cheap, else `jacobi`; a "prime" LL result is always
    /// confirmed by a `double` rerun before it is printed.
    Auto,
    /// Jacobi checks at the checkpoints (bound lost work; an error passes them with probability ~1/2).
    Jacobi,
    /// A second engine with another shift recomputes every segment (exact; twice the work).
    Double,
}

#[derive(clap::Parser, Debug)]
#[command(
    name = "prove",
    version = crate::VERSION,
    about = "Test 2^P-1 for primality (Lucas-Lehmer, or base-3 PRP) and write a signed certificate"
)]
pub struct Args {
    /// The exponent P (a prime).
    #[arg(allow_hyphen_values = true, required_unless_present = "work_dir")]
    pub exponent: Option<String>,
    /// Run the GIMPS assignments of DIR/worktodo.txt (prime95's and PRPLL's lines) until none is
    /// left, appending result lines to DIR/results.json.txt and proofs to DIR/proof/ (docs/gimps.md).
    #[arg(long, value_name = "DIR", conflicts_with_all = [
        "exponent", "cert", "prp", "checkpoint_every", "shift", "json", "iterations", "residue_budget", "state_dir",
        "fresh", "proof_power", "no_proof", "gimps_proof", "keep_proof_points", "tune",
        "stop_after", "corrupt_proof_point", "proof_from_points",
    ])]
    pub work_dir: Option<PathBuf>,
    /// The GPU to run on (CUDA's numbering); with --work-dir, worker N takes DIR/worktodo-N.txt when it exists.
    #[arg(long, value_name = "N")]
    pub device: Option<usize>,
    /// With --work-dir: one worker per GPU ("all", or the first N GPUs), GPU n on DIR/worktodo-n.txt.
    #[arg(long, value_name = "all|N", requires = "work_dir", conflicts_with = "device")]
    pub devices: Option<String>,
    /// With --work-dir: the PrimeNet user name put in result lines.
    #[arg(long, value_name = "NAME", requires = "work_dir")]
    pub user: Option<String>,
    /// With --work-dir: the computer name put in result lines.
    #[arg(long, value_name = "NAME", requires = "work_dir")]
    pub computer: Option<String>,
    /// With --work-dir: when no usable line is left, look for new ones every SECS instead of exiting.
    #[arg(long, value_name = "SECS", requires = "work_dir")]
    pub wait: Option<f64>,
    /// Testing: with --work-dir, abort right after the result is appended (`result`) or after the
    /// state is cleared (`state`), or (--primenet) after PrimeNet answered a result before it is
    /// marked sent (`sent`), as a kill there would.
    #[arg(long, value_name = "result|state|sent", hide = true, requires = "work_dir")]
    pub crash_at: Option<String>,
    #[command(flatten)]
    pub primenet: super::primenet::PrimeNetArgs,
    /// Write the signed certificate to FILE.
    #[arg(long, value_name = "FILE")]
    pub cert: Option<PathBuf>,
    /// Run the base-3 PRP test instead of Lucas-Lehmer.
    #[arg(long)]
    pub prp: bool,
    /// Which engine squares: the one that finishes first (auto: GMP for small P, where opening
    /// CUDA would take longer than the test, else the GPU when usable), GMP on the CPU, the GPU
    /// only, or the GPU's transform on the CPU (twin: slow, for checks).
    #[arg(long, value_enum, default_value_t = EngineArg::Auto)]
    pub engine: EngineArg,
    /// The exact arithmetic of the transform (GPU, twin): per exponent the one expected fastest
    /// (auto), or this one; an exponent beyond its proven bound is refused. GMP (--engine cpu) has none.
    #[arg(long, value_enum, default_value_t = ArithArg::Auto, conflicts_with = "tune")]
    pub arith: ArithArg,
    /// Ed25519 signing key file (default: created on first use in the config directory).
    #[arg(long, value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// Iterations between checkpoints (default: about 2000 checkpoints per test, at least 64 apart).
    #[arg(long, value_name = "N")]
    pub checkpoint_every: Option<u64>,
    /// Shift count: random (default), or a number in [0, P).
    #[arg(long, default_value = "random")]
    pub shift: String,
    /// Also append the JSON result line to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Stop after N iterations (a partial test; the result says "partial").
    #[arg(long, value_name = "N")]
    pub iterations: Option<u64>,
    /// Size budget in bytes for the full residues embedded in the certificate, from which
    /// `verify --replay` replays segments in parallel [default: 64 MiB; with a PRP proof only the
    /// final residue, as the proof makes the replay unnecessary]
    #[arg(long, value_name = "BYTES")]
    pub residue_budget: Option<u64>,
    /// Keep up to N evenly spaced full residues besides those in the certificate, written to the
    /// sidecar CERT.points, so that `verify --replay` (on many GPUs or machines) can replay up to
    /// about N segments in parallel; each costs P/8 bytes (docs/verify.md) [default: 64; with a
    /// PRP proof 0]
    #[arg(long, value_name = "N")]
    pub replay_points: Option<u64>,
    /// Where resumable states are saved (default: the user's data directory).
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Discard any saved state of this test and start from the beginning.
    #[arg(long)]
    pub fresh: bool,
    /// Seconds between saved states.
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub save_every: f64,
    /// GMP spot checks on spare CPU threads.
    #[arg(long, value_enum, default_value_t = Spot::Sample)]
    pub spot: Spot,
    /// CPU threads for spot checks (default: all cores but one and the Jacobi threads, at least one).
    #[arg(long, value_name = "N")]
    pub spot_threads: Option<usize>,
    /// Gerbicz block length L for PRP (checks at least every L^2 iterations) [default: 1000].
    #[arg(long, value_name = "L")]
    pub gerbicz_block: Option<u64>,
    /// How LL results are checked (docs/testing.md).
    #[arg(long, value_enum, default_value_t = LlCheck::Auto)]
    pub ll_check: LlCheck,
    /// LL: Jacobi checks in flight at once, each on a CPU thread (default: a quarter of the cores, at least one).
    #[arg(long, value_name = "N")]
    pub jacobi_threads: Option<usize>,
    /// PRP proof power K (default: what GIMPS programs choose for P); a verifier then needs
    /// about P/2^K squarings. Lowered, with a note, to fit --proof-disk-budget.
    #[arg(long, value_name = "K", conflicts_with = "no_proof")]
    pub proof_power: Option<u32>,
    /// Disk the proof points may take during the run (2^K residues of P/8 bytes).
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_PROOF_DISK_BUDGET)]
    pub proof_disk_budget: u64,
    /// Do not build a PRP proof (a full --prp test builds one by default).
    #[arg(long)]
    pub no_proof: bool,
    /// Also write the proof to FILE as a GIMPS "PRP PROOF" VERSION=2 file.
    #[arg(long, value_name = "FILE", conflicts_with = "no_proof")]
    pub gimps_proof: Option<PathBuf>,
    /// Move the run's saved proof points to DIR (a new directory, on the state directory's file system)
    /// instead of deleting them: `prove P --proof-from-points DIR` builds the proof of this or any
    /// lower power from them.
    #[arg(long, value_name = "DIR", conflicts_with = "no_proof")]
    pub keep_proof_points: Option<PathBuf>,
    /// Build the PRP proof of power --proof-power (default: the run's) from the points a run kept
    /// in DIR (--keep-proof-points), check it, write it to --gimps-proof FILE and exit (no test is run).
    #[arg(long, value_name = "DIR", requires = "gimps_proof", conflicts_with_all = [
        "cert", "checkpoint_every", "shift", "json", "iterations", "residue_budget", "replay_points", "state_dir",
        "fresh", "no_proof", "keep_proof_points", "tune", "inject_fault", "stop_after", "corrupt_proof_point",
    ])]
    pub proof_from_points: Option<PathBuf>,
    /// Time the GPU's pass shapes at P's transform length, keep the fastest for later runs on
    /// this GPU, print the timings and exit (no test is run).
    #[arg(long)]
    pub tune: bool,
    /// Testing: flip a bit of the engine's state after iteration ITER (docs/testing.md); with
    /// --work-dir, in each test that runs as far.
    #[arg(long, value_name = "ITER[:WORD:BIT]", hide = true)]
    pub inject_fault: Vec<String>,
    /// Testing: stop as after Ctrl-C once iteration ITER is reached (docs/testing.md).
    #[arg(long, value_name = "ITER", hide = true)]
    pub stop_after: Option<u64>,
    /// Testing: replace saved proof point INDEX by a wrong value before the proof is built.
    #[arg(long, value_name = "INDEX", hide = true)]
    pub corrupt_proof_point: Option<usize>,
}

impl From<Spot> for SpotMode {
    fn from(spot: Spot) -> SpotMode {
        match spot {
            Spot::Off => SpotMode::Off,
            Spot::Sample => SpotMode::Sample,
            Spot::Full => SpotMode::Full,
        }
    }
}

impl From<LlCheck> for test::LlCheck {
    fn from(check: LlCheck) -> test::LlCheck {
        match check {
            LlCheck::Auto => test::LlCheck::Auto,
            LlCheck::Jacobi => test::LlCheck::Jacobi,
            LlCheck::Double => test::LlCheck::Double,
        }
    }
}

/// The longest duration `--save-every` and `--wait` take: about 31 years (any more would
/// overflow the clock's arithmetic; no run needs it).
pub const MAX_SECONDS: f64 = 1e9;

/// A duration flag's value in seconds: finite, non-negative (positive unless `zero_ok`), at most
/// [`MAX_SECONDS`].
fn seconds(flag: &str, value: f64, zero_ok: bool) -> Result<Duration> {
    let least = if zero_ok { value >= 0.0 } else { value > 0.0 };
    if !(least && value.is_finite()) {
        bail!("{flag} must be a {} number of seconds, got {value}", if zero_ok { "non-negative" } else { "positive" });
    }
    if value > MAX_SECONDS {
        bail!("{flag} {value} is too long: at most {MAX_SECONDS:e} seconds (about 31 years)");
    }
    Ok(Duration::from_secs_f64(value))
}

/// One `--inject-fault ITER[:WORD:BIT]`.
fn parse_fault(text: &str) -> Result<Fault> {
    let parts: Vec<&str> = text.split(':').collect();
    let num =
        |s: &str| s.parse::<u64>().with_context(|| format!("--inject-fault expects ITER[:WORD:BIT], got '{text}'"));
    match parts.as_slice() {
        [i] => Ok(Fault { iteration: num(i)?, word: 0, bit: 0 }),
        [i, w, b] => {
            let bit = num(b)?;
            if bit >= 64 {
                bail!("--inject-fault bit must be below 64, got {bit}");
            }
            Ok(Fault { iteration: num(i)?, word: num(w)? as usize, bit: bit as u32 })
        }
        _ => bail!("--inject-fault expects ITER[:WORD:BIT], got '{text}'"),
    }
}

impl Args {
    /// `--engine`, `--arith` and `--device` (GPU 0 when not given), for [`crate::decide`].
    pub fn ask(&self) -> Ask {
        Ask {
            engine: self.engine.into(),
            arith: self.arith.into(),
            devices: Devices::List(vec![self.device.unwrap_or(0)]),
        }
    }

    /// The settings every test of this run gets (for `p`, or with `--work-dir` any exponent):
    /// the engine asked for, the checks and their threads, the saves, the faults.
    pub fn settings(&self, p: Option<u32>) -> Result<Settings> {
        let save_every = self.save_every()?;
        let gerbicz_block = self.gerbicz_block(p)?;
        let faults = self.faults()?;
        let (jacobi_threads, spot_threads) = self.check_threads()?;
        Ok(Settings {
            ask: self.ask(),
            ll_check: self.ll_check.into(),
            spot: self.spot.into(),
            spot_threads,
            jacobi_threads,
            save_every,
            gerbicz_block,
            proof_disk_budget: self.proof_disk_budget,
            faults,
        })
    }

    /// The faults of `--inject-fault`.
    pub fn faults(&self) -> Result<Vec<Fault>> {
        self.inject_fault.iter().map(|f| parse_fault(f)).collect()
    }

    /// `--shift` for M_p: a number in [0, p), or a random one.
    pub fn shift(&self, p: u32) -> Result<u32> {
        if self.shift == "random" {
            return test::random_shift(p);
        }
        let s: u64 = self
            .shift
            .parse()
            .with_context(|| format!("--shift must be 'random' or a number, got '{}'", self.shift))?;
        if s >= p as u64 {
            bail!("--shift {s} is out of range: it must be in [0, {p})");
        }
        Ok(s as u32)
    }

    /// `--save-every` as a duration.
    pub fn save_every(&self) -> Result<Duration> {
        seconds("--save-every", self.save_every, true)
    }

    /// `--wait` as a duration, if given.
    pub fn wait(&self) -> Result<Option<Duration>> {
        self.wait.map(|w| seconds("--wait", w, false)).transpose()
    }

    /// `--gerbicz-block`, or the default: at least 1 and at most [`gerbicz::max_block`] of `p`
    /// (with `--work-dir`, where p varies, of the largest exponent).
    pub fn gerbicz_block(&self, p: Option<u32>) -> Result<u64> {
        let block = self.gerbicz_block.unwrap_or(gerbicz::DEFAULT_BLOCK);
        let max = gerbicz::max_block(p.unwrap_or(u32::MAX));
        if block == 0 {
            bail!("--gerbicz-block must be at least 1");
        }
        if block > max {
            let of = p.map(|p| format!("M{p}")).unwrap_or("any exponent".into());
            bail!(
                "--gerbicz-block {block} is too long: at most {max} for {of} (the larger of {} and √p; a longer block only delays the checks and lengthens the last one)",
                gerbicz::DEFAULT_BLOCK
            );
        }
        Ok(block)
    }

    /// The CPU threads of the checks: (Jacobi, spot). Background Jacobi symbols on a quarter of
    /// the cores, spot checks on all but one of the rest, by default; more than the cores are
    /// clamped (with a note on stderr).
    pub fn check_threads(&self) -> Result<(usize, usize)> {
        let clamp = |option: &str, n: usize, hint: &str| -> Result<usize> {
            let (n, note) = host::clamp_threads(option, n).map_err(|e| anyhow!("{e}{hint}"))?;
            if let Some(note) = note {
                eprintln!("note: {note}");
            }
            Ok(n)
        };
        let jacobi_threads = match self.jacobi_threads {
            None => (host::cores() / 4).max(1),
            Some(n) => clamp("--jacobi-threads", n, "")?,
        };
        let spot_threads = match self.spot_threads {
            None => host::cores().saturating_sub(1 + jacobi_threads).max(1),
            Some(n) => clamp("--spot-threads", n, " (--spot off turns spot checks off)")?,
        };
        Ok((jacobi_threads, spot_threads))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(extra: &[&str]) -> Args {
        Args::try_parse_from(["prove", "89"].iter().chain(extra)).expect("arguments parse")
    }

    #[test]
    fn faults_take_an_iteration_or_iteration_word_bit() {
        let f = args(&["--inject-fault", "7", "--inject-fault", "9:3:63"]).faults().expect("valid faults");
        assert_eq!((f[0].iteration, f[0].word, f[0].bit), (7, 0, 0));
        assert_eq!((f[1].iteration, f[1].word, f[1].bit), (9, 3, 63));
        for bad in ["9:3:64", "9:3", "x", "9:3:1:2", "1.5"] {
            let e = args(&["--inject-fault", bad]).faults().expect_err(bad).to_string();
            assert!(e.contains("--inject-fault"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_shift_lies_below_p() {
        assert_eq!(args(&["--shift", "88"]).shift(89).expect("in range"), 88);
        assert!(args(&["--shift", "89"]).shift(89).expect_err("out of range").to_string().contains("[0, 89)"));
        assert!(args(&["--shift", "two"]).shift(89).is_err());
        assert!(args(&["--shift", "random"]).shift(89).expect("random") < 89);
    }

    #[test]
    fn save_every_and_the_gerbicz_block_are_checked() {
        assert_eq!(args(&["--save-every", "1.5"]).save_every().expect("valid"), Duration::from_millis(1500));
        assert!(args(&["--save-every=-1"]).save_every().is_err());
        assert!(args(&["--save-every", "inf"]).save_every().is_err());
        assert!(args(&["--gerbicz-block", "0"]).gerbicz_block(Some(89)).is_err());
        assert_eq!(args(&["--gerbicz-block", "7"]).gerbicz_block(Some(89)).expect("valid"), 7);
        assert_eq!(args(&[]).gerbicz_block(Some(89)).expect("default"), gerbicz::DEFAULT_BLOCK);
        // Bounded by the larger of the default and √p (issue 35: 2^64 − 1 ran for minutes).
        assert_eq!(args(&["--gerbicz-block", "1000"]).gerbicz_block(Some(9689)).expect("valid"), 1000);
        let e = args(&["--gerbicz-block", "1001"]).gerbicz_block(Some(9689)).expect_err("too long").to_string();
        assert!(e.contains("at most 1000 for M9689"), "{e}");
        assert_eq!(args(&["--gerbicz-block", "11674"]).gerbicz_block(Some(136_279_841)).expect("valid"), 11674);
        assert!(args(&["--gerbicz-block", "11675"]).gerbicz_block(Some(136_279_841)).is_err());
        let huge = u64::MAX.to_string();
        let e = args(&["--gerbicz-block", &huge]).gerbicz_block(None).expect_err("too long").to_string();
        assert!(e.contains("at most 65536 for any exponent"), "{e}");
        // Huge seconds: a clear error, not a panic (issue 35); --wait must be positive.
        for flag in ["--save-every", "--wait"] {
            let a = Args::try_parse_from(["prove", "--work-dir", "d", flag, "1e20"]).expect("parses");
            let e = if flag == "--wait" { a.wait().map(drop) } else { a.save_every().map(drop) };
            assert!(e.expect_err(flag).to_string().contains("is too long: at most 1e9 seconds"), "{flag}");
        }
        assert!(args(&["--save-every", "1e9"]).save_every().is_ok());
        let a = |w: &str| Args::try_parse_from(["prove", "--work-dir", "d", "--wait", w]).expect("parses").wait();
        assert_eq!(a("2.5").expect("valid"), Some(Duration::from_millis(2500)));
        assert!(a("0").is_err() && a("nan").is_err());
    }
}
