//! The exact arithmetic a transform engine squares in (`--arith auto|goldilocks|m61m31|fp64`): the
//! user's choice, and under `auto` the tuner's. The tuner ([`fastest`]) takes, per exponent, each
//! arithmetic at its shortest length ([`smallest_length`]) and picks the one a table of measured
//! µs per iteration says is fastest on the card at hand ([`SpeedTable::for_card`]: a card the
//! table was not measured on has none, since the FP64 rate differs tenfold between cards); where
//! one of them has no measurement it keeps Goldilocks (the measured path: nothing gets slower),
//! and where only one arithmetic's bound holds p it takes that one. `crate::decide` joins this
//! with the engine choice, once per piece of work.

use crate::engine::EngineError;
use crate::transform::length::smallest_length;
use crate::transform::plan::{Arith, Length, MIN_EXPONENT};

/// `--arith`: what the user asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithChoice {
    /// The tuner's choice per exponent ([`fastest`]).
    Auto,
    /// This arithmetic (an error where its bound does not hold p).
    Fixed(Arith),
}

/// A row of a built-in table: Goldilocks, M61·M31 or FP64 at odd·2^log2, µs per iteration.
fn gl(log2: u32, us: f64) -> (Arith, Length, f64) {
    (Arith::Goldilocks, Length { odd: 1, log2 }, us)
}
fn mm(odd: u32, log2: u32, us: f64) -> (Arith, Length, f64) {
    (Arith::M61M31, Length { odd, log2 }, us)
}
fn fp(log2: u32, us: f64) -> (Arith, Length, f64) {
    (Arith::Fp64, Length { odd: 1, log2 }, us)
}

/// Measured µs per LL iteration (bare loop) per (arithmetic, length), on one GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeedTable {
    /// Where the figures come from, for the stderr line.
    pub source: &'static str,
    /// What the GPU's name contains where these figures hold (the card they were measured on).
    pub card: &'static str,
    pub rows: Vec<(Arith, Length, f64)>,
}

impl SpeedTable {
    /// The arithmetics side by side on one H100 (`gpu-selftest --arith A bench --iters 3000` at
    /// the largest exponent of each length 2^15 … 2^23 of each, bench/RESULTS.md): Goldilocks
    /// and FP64 in one call (2026-11-28 04:00 UTC, FP64 with its kernels compiled per shape and
    /// the cheaper carry walk), M61·M31 from the call of 2026-11-27 22:10 (its kernels unchanged
    /// since; it is the slowest at every length by 1.3× or more). Every exponent from 946,177 to
    /// FP64's bound has each arithmetic's shortest length measured (above it Goldilocks and
    /// M61·M31 hold p, and M61·M31's 2^23 is not measured). FP64's row at a length is its slowest
    /// pair's (at 2^22 the wider one's, 341.7 at 163,577,855, against the narrow pair's 308.2 at
    /// 146,800,639). So FP64 is picked where it is one length shorter than Goldilocks and that
    /// is faster: 5,898,241 … 10,747,903 (31.6 against 32.4 µs/iter), 11,534,337 … 21,233,663
    /// (46.7 against 60.4), 22,544,385 … 41,943,039 (83.0 against 109.2), 44,040,193 …
    /// 82,837,503 (186.1 against 230.3), 85,983,233 … 163,577,855 (341.7 against 488.6).
    pub fn h100() -> SpeedTable {
        SpeedTable {
            source: "H100, Goldilocks and FP64 in one call, bench/RESULTS.md 2026-11-28 04:00",
            card: "H100",
            rows: vec![
                gl(15, 13.6),
                gl(16, 14.8),
                gl(17, 17.0),
                gl(18, 21.0),
                gl(19, 32.4),
                gl(20, 60.4),
                gl(21, 109.2),
                gl(22, 230.3),
                gl(23, 488.6),
                mm(1, 15, 31.9),
                mm(3, 14, 36.5),
                mm(1, 16, 36.6),
                mm(3, 15, 39.7),
                mm(1, 17, 39.9),
                mm(3, 16, 52.4),
                mm(1, 18, 52.8),
                mm(3, 17, 79.6),
                mm(1, 19, 87.4),
                mm(3, 18, 145.5),
                mm(1, 20, 162.8),
                mm(3, 19, 269.6),
                mm(1, 21, 309.5),
                mm(3, 20, 582.6),
                mm(1, 22, 701.1),
                mm(3, 21, 1313.0),
                fp(15, 23.5),
                fp(16, 24.7),
                fp(17, 26.1),
                fp(18, 31.6),
                fp(19, 46.7),
                fp(20, 83.0),
                fp(21, 186.1),
                fp(22, 341.7),
            ],
        }
    }

    /// The arithmetics on one H200 (`gpu-selftest --arith A bench --iters 2000` at the largest
    /// exponent of each length, bench/RESULTS.md): Goldilocks 2^15 … 2^23 and M61·M31 2^15 …
    /// 2^22 and 3·2^14 … 3·2^21 in one call (main 2c57578, 2026-11-29 23:10 UTC), FP64 2^15 …
    /// 2^22 re-timed since (2026-11-30 04:40 UTC, call AK; at 2^22 the widest pair's,
    /// 163,577,855, with the i128 walk; 136,279,841 runs 242). As on the H100, every exponent
    /// from 946,177 to FP64's bound has each arithmetic's shortest length measured, and FP64 is
    /// picked in the same five bands, one length shorter than Goldilocks and faster there:
    /// 5,898,241 … 10,747,903 (25.9 against 31.7 µs/iter), 11,534,337 … 21,233,663 (37.9 against
    /// 58.4), 22,544,385 … 41,943,039 (69.1 against 105.2), 44,040,193 … 82,837,503 (139.0
    /// against 208.3), 85,983,233 … 163,577,855 (289.3 against 440.9). M61·M31 is the slowest at
    /// every length.
    pub fn h200() -> SpeedTable {
        SpeedTable {
            source: "H200, bench/RESULTS.md 2026-11-29 23:10 (FP64: 2026-11-30 04:40)",
            card: "H200",
            rows: vec![
                gl(15, 13.1),
                gl(16, 14.6),
                gl(17, 16.8),
                gl(18, 20.1),
                gl(19, 31.7),
                gl(20, 58.4),
                gl(21, 105.2),
                gl(22, 208.3),
                gl(23, 440.9),
                mm(1, 15, 31.7),
                mm(3, 14, 36.3),
                mm(1, 16, 36.4),
                mm(3, 15, 39.6),
                mm(1, 17, 39.6),
                mm(3, 16, 52.0),
                mm(1, 18, 52.0),
                mm(3, 17, 78.4),
                mm(1, 19, 84.9),
                mm(3, 18, 141.0),
                mm(1, 20, 156.8),
                mm(3, 19, 256.7),
                mm(1, 21, 295.9),
                mm(3, 20, 517.5),
                mm(1, 22, 626.4),
                mm(3, 21, 1126.4),
                fp(15, 18.0),
                fp(16, 20.2),
                fp(17, 21.2),
                fp(18, 25.9),
                fp(19, 37.9),
                fp(20, 69.1),
                fp(21, 139.0),
                fp(22, 289.3),
            ],
        }
    }

    /// The table for the GPU named `name` (None: no GPU, the CPU twin): a built-in one on the
    /// card it was measured on (the H100's, the H200's), else none (every arithmetic unmeasured:
    /// the tuner keeps Goldilocks wherever its bound holds p, as on a card whose FP64 units run
    /// at a fraction of the H100's rate the integer arithmetic stays ahead).
    pub fn for_card(name: Option<&str>) -> SpeedTable {
        let Some(name) = name else {
            return SpeedTable { source: "no speed table for the CPU twin", card: "", rows: vec![] };
        };
        [SpeedTable::h100(), SpeedTable::h200()].into_iter().find(|t| name.contains(t.card)).unwrap_or(SpeedTable {
            source: "no speed table for this GPU",
            card: "",
            rows: vec![],
        })
    }

    /// The measured µs per iteration of `arith` at `len`, if any.
    pub fn us_per_iter(&self, arith: Arith, len: Length) -> Option<f64> {
        self.rows.iter().find(|&&(a, l, _)| a == arith && l == len).map(|&(_, _, us)| us)
    }
}

/// What the tuner picked for an exponent, and why (one line for stderr).
#[derive(Debug, Clone, PartialEq)]
pub struct ArithPick {
    pub arith: Arith,
    pub length: Length,
    pub why: String,
}

/// The arithmetic (at its shortest length) expected fastest for M_p by `table`, over every
/// arithmetic of the registry ([`Arith::ALL`], in its order): the only one whose bound holds p;
/// else, when each that holds p is measured, the fastest (on a tie the earlier); else the first
/// (Goldilocks: the measured path, so nothing gets slower). An error naming the largest exponent
/// any arithmetic supports when none holds p.
pub fn fastest(p: u32, table: &SpeedTable) -> Result<ArithPick, EngineError> {
    let at = |a: Arith, len: Length| match table.us_per_iter(a, len) {
        Some(us) => format!("{} n={len} {us} µs/iter", a.name()),
        None => format!("{} n={len} not measured", a.name()),
    };
    let (mut held, mut errors) = (Vec::new(), Vec::new());
    for a in Arith::ALL {
        match smallest_length(p, a) {
            Ok(len) => held.push((a, len)),
            Err(e) => errors.push(e),
        }
    }
    let Some(&(first, first_len)) = held.first() else {
        if p < MIN_EXPONENT {
            let e = errors.first().map(ToString::to_string).unwrap_or_default();
            return Err(EngineError::NoPlan { p, why: format!("{e}; the CPU engine (--engine cpu, GMP) tests it") });
        }
        let top = Arith::ALL.into_iter().map(Arith::largest_exponent).max().unwrap_or(0);
        let e = errors.last().map(ToString::to_string).unwrap_or_default();
        return Err(EngineError::NoPlan {
            p,
            why: format!("beyond every arithmetic's proven bound: the largest supported exponent is {top} ({e})"),
        });
    };
    let pick = |i: usize, why: String| Ok(ArithPick { arith: held[i].0, length: held[i].1, why });
    let others = |i: usize| {
        let rest: Vec<String> = held.iter().enumerate().filter(|&(k, _)| k != i).map(|(_, &(a, l))| at(a, l)).collect();
        rest.join(", ")
    };
    if held.len() == 1 {
        return pick(0, format!("{}: the only arithmetic whose bound holds M{p}", at(first, first_len)));
    }
    let Some(times) = held.iter().map(|&(a, l)| table.us_per_iter(a, l)).collect::<Option<Vec<f64>>>() else {
        let why = format!(
            "{} ({}); {}: {} unless all are measured",
            at(first, first_len),
            table.source,
            others(0),
            first.name()
        );
        return pick(0, why);
    };
    let best = (0..held.len()).fold(0, |b, i| if times[i] < times[b] { i } else { b });
    let than = if best == 0 { "not slower than" } else { "faster than" };
    pick(best, format!("{}, {than} {} ({})", at(held[best].0, held[best].1), others(best), table.source))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: Vec<(Arith, Length, f64)>) -> SpeedTable {
        SpeedTable { source: "test", card: "test", rows }
    }
    const fn len(odd: u32, log2: u32) -> Length {
        Length { odd, log2 }
    }

    /// Each row of `t` at a length of its arithmetic, once.
    fn rows_are_lengths_once_each(t: &SpeedTable) {
        for (i, &(a, len, _)) in t.rows.iter().enumerate() {
            assert!(a.lengths().contains(&len), "{} {len}", a.name());
            assert!(t.rows[..i].iter().all(|&(b, l, _)| (b, l) != (a, len)), "{} {len} twice", a.name());
        }
    }

    /// Every exponent from 946,177 (M61·M31 at 3·2^14) to FP64's bound has each arithmetic
    /// measured at its shortest length in `t`, and the pick is FP64 in five bands (where it is a
    /// length shorter than Goldilocks and faster there: their ends and points inside), else
    /// Goldilocks; below and above, something is unmeasured: Goldilocks.
    fn picks_fp64_in_the_five_bands(t: &SpeedTable) {
        rows_are_lengths_once_each(t);
        let fp = [
            5_898_241u32,
            8_000_009,
            10_747_903,
            11_534_337,
            20_996_011,
            21_233_663,
            22_544_385,
            30_000_001,
            41_943_039,
            44_040_193,
            82_589_933,
            82_837_503,
            85_983_233,
            136_279_841,
            163_577_855,
        ];
        let gl = [
            946_177u32,
            1_257_787,
            3_021_377,
            5_898_239,
            10_747_905,
            11_534_335,
            21_233_665,
            22_544_383,
            41_943_041,
            44_040_191,
            82_837_505,
            163_577_857,
        ];
        for p in fp.into_iter().chain(gl) {
            let pick = fastest(p, t).unwrap();
            let want = if fp.contains(&p) { Arith::Fp64 } else { Arith::Goldilocks };
            assert_eq!(pick.arith, want, "p={p}: {}", pick.why);
            assert_eq!(pick.length, smallest_length(p, want).unwrap());
            assert!(!pick.why.contains("not measured"), "p={p}: {}", pick.why);
            assert!(pick.why.contains(&format!("({}, ", t.card)), "p={p}: {}", pick.why);
        }
        for p in [9_689, 999_999_937] {
            let pick = fastest(p, t).unwrap();
            assert_eq!(pick.arith, Arith::Goldilocks, "p={p}: {}", pick.why);
            assert!(pick.why.contains("not measured"), "{}", pick.why);
        }
    }

    #[test]
    fn the_h100_table_picks_fp64_where_it_is_a_length_shorter_and_faster() {
        let t = SpeedTable::h100();
        picks_fp64_in_the_five_bands(&t);
        let pick = fastest(136_279_841, &t).unwrap();
        assert!(
            pick.why.contains(
                "fp64 n=2^22 341.7 µs/iter, faster than goldilocks n=2^23 488.6 µs/iter, m61m31 n=2^22 701.1 µs/iter"
            ),
            "{}",
            pick.why
        );
    }

    #[test]
    fn the_h200_table_picks_fp64_where_it_is_a_length_shorter_and_faster() {
        let t = SpeedTable::h200();
        picks_fp64_in_the_five_bands(&t);
        let pick = fastest(30_000_001, &t).unwrap();
        assert!(
            pick.why.contains(
                "fp64 n=2^20 69.1 µs/iter, faster than goldilocks n=2^21 105.2 µs/iter, m61m31 n=2^20 156.8 µs/iter"
            ),
            "{}",
            pick.why
        );
    }

    #[test]
    fn a_built_in_table_holds_only_on_its_card() {
        assert_eq!(SpeedTable::for_card(Some("NVIDIA H100 80GB HBM3")), SpeedTable::h100());
        assert_eq!(SpeedTable::for_card(Some("NVIDIA H200")), SpeedTable::h200());
        for other in [Some("NVIDIA GeForce RTX 4090"), None] {
            let t = SpeedTable::for_card(other);
            assert!(t.rows.is_empty(), "{other:?}");
            for p in [20_996_011, 136_279_841] {
                let pick = fastest(p, &t).unwrap();
                assert_eq!(pick.arith, Arith::Goldilocks, "{other:?} p={p}: {}", pick.why);
                assert!(pick.why.contains("not measured"), "{}", pick.why);
            }
        }
    }

    #[test]
    fn the_tuner_takes_the_faster_measured_arithmetic() {
        // 136,279,841: Goldilocks 2^23, M61·M31 2^22, FP64 2^22; 82,589,933: 2^22 against 3·2^20
        // (and FP64's 2^21, not measured here: so not compared).
        let t = table(vec![
            (Arith::Goldilocks, len(1, 23), 429.7),
            (Arith::M61M31, len(1, 22), 300.0),
            (Arith::Fp64, len(1, 22), 350.0),
            (Arith::Goldilocks, len(1, 22), 208.2),
            (Arith::M61M31, len(3, 20), 250.0),
        ]);
        let pick = fastest(136_279_841, &t).unwrap();
        assert_eq!((pick.arith, pick.length), (Arith::M61M31, len(1, 22)), "{}", pick.why);
        assert!(pick.why.contains("faster than goldilocks n=2^23"), "{}", pick.why);
        let pick = fastest(82_589_933, &t).unwrap();
        assert_eq!((pick.arith, pick.length), (Arith::Goldilocks, len(1, 22)), "{}", pick.why);
        let t = table(vec![
            (Arith::Goldilocks, len(1, 23), 429.7),
            (Arith::M61M31, len(1, 22), 450.0),
            (Arith::Fp64, len(1, 22), 153.0),
        ]);
        let pick = fastest(136_279_841, &t).unwrap();
        assert_eq!((pick.arith, pick.length), (Arith::Fp64, len(1, 22)), "{}", pick.why);
        // Equal is not faster; measurements of some arithmetics alone are not compared.
        let t = table(vec![
            (Arith::Goldilocks, len(1, 23), 300.0),
            (Arith::M61M31, len(1, 22), 300.0),
            (Arith::Fp64, len(1, 22), 300.0),
        ]);
        assert_eq!(fastest(136_279_841, &t).unwrap().arith, Arith::Goldilocks);
        let t = table(vec![(Arith::M61M31, len(1, 22), 1.0), (Arith::Fp64, len(1, 22), 1.0)]);
        assert_eq!(fastest(136_279_841, &t).unwrap().arith, Arith::Goldilocks);
    }

    #[test]
    fn beyond_a_bound_the_other_arithmetic_or_a_clear_error() {
        let (gl_top, mm_top) = (Arith::Goldilocks.largest_exponent(), Arith::M61M31.largest_exponent());
        assert!(gl_top < mm_top);
        let pick = fastest(gl_top + 2, &SpeedTable::h100()).unwrap();
        assert_eq!(pick.arith, Arith::M61M31, "{}", pick.why);
        assert!(pick.why.contains("the only arithmetic"), "{}", pick.why);
        let e = fastest(mm_top + 2, &SpeedTable::h100()).unwrap_err().to_string();
        assert!(e.contains(&format!("the largest supported exponent is {mm_top}")), "{e}");
    }
}
