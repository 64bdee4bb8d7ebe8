//! The one decision of a piece of work, made once before any engine is opened: which engine
//! squares (GMP, the GPUs, the CPU twin), in which exact arithmetic and at which length, on which
//! GPUs, with how many CPU threads, and why. `prove`, the work loop, the verify replay and the
//! proof check all ask [`decide`]. It times GMP at most once ([`cost`]), looks at what is there
//! (the CUDA libraries and the device count, never a context) only where a GPU could finish
//! first, settles the arithmetic and its shortest length once, and says in one line what it
//! chose and why. [`open`] builds the engines a [`Decision`] names; it is the one place where
//! `--engine auto` falls back to GMP (a GPU that is there but fails to open).
//!
//! Layer: above `engine`, `cpu_ref` and `gpu` (it builds their engines), below `run` and `verify`.

pub mod cost;
mod devices;
pub mod open;

pub use devices::Devices;

use crate::engine::arith::{fastest, ArithChoice, SpeedTable};
use crate::engine::{EngineChoice, EngineError};
use crate::exponent::TestKind;
use crate::transform::length::smallest_length;
use crate::transform::plan::{Arith, Length};
use cost::Estimate;

/// What the user asked for: `--engine`, `--arith` and the GPUs allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ask {
    pub engine: EngineChoice,
    pub arith: ArithChoice,
    pub devices: Devices,
}

impl Ask {
    /// GMP alone (`--engine cpu`).
    pub fn cpu() -> Ask {
        Ask { engine: EngineChoice::Cpu, arith: ArithChoice::Auto, devices: Devices::All }
    }
}

/// The shape of the work, for the line that says what was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One test; `doubled` when every segment is computed twice (`--ll-check double`).
    Test { doubled: bool },
    /// Segments replayed side by side (`verify`).
    Segments,
}

/// The work to decide for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Work {
    pub p: u32,
    pub kind: TestKind,
    /// Iterations in all.
    pub iterations: u64,
    /// The longest piece, which is not split further (a run, a segment).
    pub longest: u64,
    /// Pieces that may run side by side (two runs of a doubled test, segments).
    pub pieces: usize,
    /// CPU threads the work may take.
    pub threads: usize,
    pub shape: Shape,
}

impl Work {
    /// A test of `iterations` iterations of p on this host; `doubled` when every segment is
    /// computed twice: two GMP engines then run side by side on two cores (one core: one after
    /// the other), two GPU engines share the GPU one after the other.
    pub fn test(p: u32, kind: TestKind, iterations: u64, doubled: bool) -> Work {
        let runs = if doubled { 2 } else { 1 };
        let threads = crate::host::cores();
        Work {
            p,
            kind,
            iterations: runs * iterations,
            longest: iterations,
            pieces: runs as usize,
            threads,
            shape: Shape::Test { doubled },
        }
    }

    /// Segments of these lengths replayed on up to `threads` CPU threads (GPU drivers included).
    pub fn segments(p: u32, kind: TestKind, lengths: impl IntoIterator<Item = u64>, threads: usize) -> Work {
        let (mut iterations, mut longest, mut pieces) = (0, 0, 0);
        for n in lengths {
            (iterations, longest, pieces) = (iterations + n, longest.max(n), pieces + 1);
        }
        Work { p, kind, iterations, longest, pieces, threads, shape: Shape::Segments }
    }

    /// The CPU threads GMP would run the work on: one per piece, at most `threads`.
    fn cpu_workers(&self) -> usize {
        self.pieces.min(self.threads).max(1)
    }

    /// The work's time on the CPU and on `gpus` GPUs at (CPU, GPU) µs per iteration `rates`.
    pub fn estimate(&self, rates: (f64, f64), gpus: usize) -> Estimate {
        Estimate::at_rates(rates, self.iterations, self.longest, self.cpu_workers(), gpus)
    }
}

/// The engine a decision names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    /// GMP on the CPU.
    Gmp,
    /// The GPUs of [`Decision::gpus`] (with [`Decision::cpu_threads`] GMP threads beside them).
    Gpu,
    /// The CPU twin of the GPU transform.
    Twin,
}

/// A decision: what squares the work, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub work: Work,
    pub engine: EngineKind,
    /// The transform's arithmetic (GPU, twin; Goldilocks, unused, for GMP) and its length for p
    /// (`None` for GMP).
    pub arith: Arith,
    pub length: Option<Length>,
    /// The GPUs (CUDA ordinals) of a GPU engine; empty otherwise.
    pub gpus: Vec<usize>,
    /// CPU threads that run GMP (or the twin) for the work: all of them for a CPU engine, those
    /// not driving a GPU under `--engine auto`, none under `--engine gpu`.
    pub cpu_threads: usize,
    /// (CPU, GPU) µs per iteration, GMP timed here, when `auto` weighed the two.
    pub rates: Option<(f64, f64)>,
    /// `--engine auto`: a GPU that fails to open leaves the work to GMP ([`open`]).
    pub auto: bool,
    /// What was chosen and why, one line for stderr; `None` where nothing was left to choose.
    pub why: Option<String>,
}

impl Decision {
    /// GMP on the work's threads.
    pub fn gmp(work: Work, why: Option<String>) -> Decision {
        let cpu_threads = work.threads;
        Decision {
            work,
            engine: EngineKind::Gmp,
            arith: Arith::Goldilocks,
            length: None,
            gpus: Vec::new(),
            cpu_threads,
            rates: None,
            auto: false,
            why,
        }
    }

    /// The arithmetic of the transform engines that run the work (`None` for GMP alone).
    pub fn transform(&self) -> Option<Arith> {
        (self.engine != EngineKind::Gmp).then_some(self.arith)
    }
}

/// Decide the engine, arithmetic, length and devices for `work` as `ask` allows. A forced
/// arithmetic must hold p (else an error naming its largest exponent) and needs a transform
/// engine: an error with `--engine cpu`; under `--engine auto` it asks for the GPU whatever the
/// cost model says (GMP where none is usable). Otherwise `auto` takes the engine the cost model
/// says finishes first, and looks for GPUs only where they could.
pub fn decide(ask: &Ask, work: &Work) -> Result<Decision, EngineError> {
    check_engine(ask.arith, ask.engine)?;
    let (p, forced) = (work.p, ask.arith != ArithChoice::Auto);
    match ask.engine {
        EngineChoice::Cpu => Ok(Decision::gmp(*work, None)),
        EngineChoice::Twin => {
            let (arith, length, why) = arithmetic(ask.arith, p, &SpeedTable::for_card(None))?;
            let why = why.map(|w| format!("arith auto: {w}"));
            Ok(Decision { engine: EngineKind::Twin, arith, length: Some(length), ..Decision::gmp(*work, why) })
        }
        EngineChoice::Gpu => {
            let gpus = ask.devices.resolve()?;
            let (arith, length, why) = arithmetic(ask.arith, p, &card_table(&gpus))?;
            let why = why.map(|w| format!("arith auto: {w}"));
            Ok(Decision {
                engine: EngineKind::Gpu,
                arith,
                length: Some(length),
                gpus,
                cpu_threads: 0,
                ..Decision::gmp(*work, why)
            })
        }
        EngineChoice::Auto if forced => {
            let (arith, length, _) = arithmetic(ask.arith, p, &SpeedTable::for_card(None))?;
            let name = arith.name();
            Ok(match ask.devices.resolve() {
                Ok(gpus) => Decision {
                    engine: EngineKind::Gpu,
                    arith,
                    length: Some(length),
                    cpu_threads: work.threads.saturating_sub(gpus.len()),
                    gpus,
                    auto: true,
                    ..Decision::gmp(
                        *work,
                        Some(format!("engine auto: the GPU, as --arith {name} asks for a transform engine")),
                    )
                },
                Err(e) => Decision::gmp(
                    *work,
                    Some(format!("engine auto: the CPU (GMP): --arith {name} asks for a GPU, and {e}")),
                ),
            })
        }
        EngineChoice::Auto => auto(ask, work),
    }
}

/// `--engine auto` with `--arith auto`: the CPU when it finishes first (before looking for a GPU
/// when it finishes before any GPU could start, or before as many as were asked for), else the
/// GPUs there are, in the arithmetic the tuner expects fastest.
fn auto(ask: &Ask, work: &Work) -> Result<Decision, EngineError> {
    let (p, kind) = (work.p, work.kind);
    let rates = (cost::cpu_us_per_iter(p, kind), cost::gpu_us_per_iter(p));
    let est = |gpus: usize| work.estimate(rates, gpus);
    let (cpu, twice) = match work.shape {
        Shape::Test { doubled } => {
            ("the CPU (GMP)".to_string(), if doubled { ", each segment computed twice" } else { "" })
        }
        Shape::Segments => (format!("{} CPU threads (GMP)", work.threads), ""),
    };
    let gmp = |why: String| Decision { rates: Some(rates), ..Decision::gmp(*work, Some(why)) };
    let one = est(1);
    let before = ask.devices.most().map_or(one.cpu_before_gpu_starts(), |n| est(n).cpu_wins());
    if before {
        return Ok(gmp(format!("engine auto: {cpu}, it finishes first: {}{twice}", one.describe())));
    }
    let gpus = match ask.devices.resolve() {
        Ok(g) => g,
        Err(e) => {
            return Ok(gmp(format!("engine auto: {cpu}: {e} (a GPU would finish first: {}{twice})", one.describe())))
        }
    };
    let all = est(gpus.len());
    if all.cpu_wins() {
        return Ok(gmp(format!("engine auto: {cpu}, it finishes first: {}{twice}", all.describe())));
    }
    let pick = fastest(p, &card_table(&gpus))?;
    let cpu_threads = match work.shape {
        Shape::Test { .. } => 0,
        Shape::Segments => work.threads.saturating_sub(gpus.len()),
    };
    let on = match work.shape {
        Shape::Test { .. } => "the GPU, it finishes first".to_string(),
        Shape::Segments => format!("{} GPU(s) and {cpu_threads} CPU threads, the GPUs finish first", gpus.len()),
    };
    let why = format!("engine auto: {on}: {}{twice}; arith auto: {}", all.describe(), pick.why);
    Ok(Decision {
        engine: EngineKind::Gpu,
        arith: pick.arith,
        length: Some(pick.length),
        gpus,
        cpu_threads,
        auto: true,
        ..gmp(why)
    })
}

/// The speed table of the first of `gpus` ([`SpeedTable::for_card`], by the name the driver
/// gives it; none where it cannot be named).
fn card_table(gpus: &[usize]) -> SpeedTable {
    let name = gpus.first().and_then(|&g| crate::gpu::device_name(g).ok());
    SpeedTable::for_card(Some(name.as_deref().unwrap_or("an unnamed GPU")))
}

/// The arithmetic `choice` gives for M_p, its shortest length, and under `auto` why (the
/// fastest by `table`).
fn arithmetic(choice: ArithChoice, p: u32, table: &SpeedTable) -> Result<(Arith, Length, Option<String>), EngineError> {
    match choice {
        ArithChoice::Fixed(a) => Ok((a, smallest_length(p, a)?, None)),
        ArithChoice::Auto => {
            let pick = fastest(p, table)?;
            Ok((pick.arith, pick.length, Some(pick.why)))
        }
    }
}

/// A forced arithmetic needs an engine with a transform: an error for GMP (`--engine cpu`), so
/// that `--engine cpu --arith m61m31` never runs something else than asked.
pub fn check_engine(choice: ArithChoice, engine: EngineChoice) -> Result<(), EngineError> {
    match (choice, engine) {
        (ArithChoice::Fixed(a), EngineChoice::Cpu) => Err(EngineError::Other(format!(
            "--arith {} needs a transform engine (--engine gpu, twin or auto); the CPU engine (GMP) has no arithmetic to choose",
            a.name()
        ))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(engine: EngineChoice, arith: ArithChoice) -> Ask {
        Ask { engine, arith, devices: Devices::All }
    }

    #[test]
    fn exponents_below_every_transform_go_to_gmp_under_auto() {
        // Issue 35: `prove 3` (5, 7) under the default engine, and verify of their certificates.
        for p in [3u32, 5, 7, 11] {
            let w = Work::test(p, TestKind::Ll, u64::from(p) - 2, false);
            let d = decide(&ask(EngineChoice::Auto, ArithChoice::Auto), &w).unwrap();
            assert_eq!(d.engine, EngineKind::Gmp, "p={p}");
            // A transform engine asked for by name: a clear error, not "beyond every bound".
            let e = decide(&ask(EngineChoice::Twin, ArithChoice::Auto), &w).unwrap_err().to_string();
            assert!(e.contains("too small") && e.contains("--engine cpu"), "{e}");
        }
    }

    #[test]
    fn a_forced_arithmetic_needs_a_transform_engine_and_must_hold_p() {
        let w = Work::test(9_689, TestKind::Ll, 9_687, false);
        let e = decide(&ask(EngineChoice::Cpu, ArithChoice::Fixed(Arith::M61M31)), &w).unwrap_err().to_string();
        assert!(e.contains("--arith m61m31 needs a transform engine"), "{e}");
        let d = decide(&ask(EngineChoice::Cpu, ArithChoice::Auto), &w).unwrap();
        assert_eq!((d.engine, d.transform(), d.why), (EngineKind::Gmp, None, None));
        let d = decide(&ask(EngineChoice::Twin, ArithChoice::Fixed(Arith::M61M31)), &w).unwrap();
        assert_eq!((d.engine, d.arith, d.why.as_deref()), (EngineKind::Twin, Arith::M61M31, None));
        assert_eq!(d.length, Some(smallest_length(9_689, Arith::M61M31).unwrap()));
        let top = Arith::Goldilocks.largest_exponent() + 2;
        let w = Work::test(top, TestKind::Ll, 1000, false);
        let e = decide(&ask(EngineChoice::Twin, ArithChoice::Fixed(Arith::Goldilocks)), &w).unwrap_err().to_string();
        assert!(e.contains(&format!("the largest exponent goldilocks supports is {}", top - 2)), "{e}");
    }

    #[test]
    fn the_tuner_settles_the_twin_and_says_why_in_one_line() {
        let w = Work::test(127, TestKind::Ll, 125, false);
        let d = decide(&ask(EngineChoice::Twin, ArithChoice::Auto), &w).unwrap();
        assert_eq!((d.engine, d.arith), (EngineKind::Twin, Arith::Goldilocks));
        assert_eq!(d.length, Some(smallest_length(127, Arith::Goldilocks).unwrap()));
        assert!(d.why.as_deref().is_some_and(|w| w.starts_with("arith auto: goldilocks n=2^")), "{:?}", d.why);
    }

    #[test]
    fn auto_takes_the_cpu_for_small_work_without_looking_for_a_gpu() {
        // GPU 7 exists nowhere: had auto looked, it would say so.
        let a = Ask { devices: Devices::List(vec![7]), ..ask(EngineChoice::Auto, ArithChoice::Auto) };
        let d = decide(&a, &Work::test(127, TestKind::Ll, 125, true)).unwrap();
        assert_eq!((d.engine, d.cpu_threads), (EngineKind::Gmp, crate::host::cores()));
        let why = d.why.unwrap();
        assert!(why.starts_with("engine auto: the CPU (GMP), it finishes first: CPU ~"), "{why}");
        assert!(why.ends_with(", each segment computed twice"), "{why}");
        assert!(d.rates.is_some_and(|(cpu, gpu)| cpu > 0.0 && gpu > 0.0));
        let d = decide(&a, &Work::segments(127, TestKind::Ll, [60, 65], 3)).unwrap();
        assert_eq!((d.engine, d.cpu_threads), (EngineKind::Gmp, 3));
        assert!(d.why.unwrap().starts_with("engine auto: 3 CPU threads (GMP), it finishes first"));
        // A forced arithmetic under auto asks for the GPU; GPU 7 is missing, so GMP, said once.
        let a = Ask { arith: ArithChoice::Fixed(Arith::M61M31), ..a };
        let d = decide(&a, &Work::test(127, TestKind::Ll, 125, false)).unwrap();
        assert_eq!(d.engine, EngineKind::Gmp);
        assert!(d.why.unwrap().contains("--arith m61m31 asks for a GPU, and "));
    }

    #[test]
    fn work_adds_up_its_pieces() {
        let w = Work::segments(127, TestKind::Ll, [10, 40, 25], 2);
        assert_eq!((w.iterations, w.longest, w.pieces, w.cpu_workers()), (75, 40, 3, 2));
        let w = Work::test(127, TestKind::Ll, 125, true);
        assert_eq!((w.iterations, w.longest, w.pieces), (250, 125, 2));
        assert_eq!(w.cpu_workers(), crate::host::cores().min(2));
    }
}
