//! Tuning, as LucasNTT and PRPLL do it: which number of radix-2 stages per line of a GPU pass
//! is fastest for a transform length, on this GPU with these kernels. `prove P --tune` times the
//! candidates with CUDA events ([`super::bench_plan`]) and keeps the winner in a small text file
//! of the disk cache, named by the kernels' cache key (source, GPU, driver, NVRTC: new kernels or
//! another GPU start untuned). [`GpuEngine::new`](super::GpuEngine::new) takes the stored choice
//! for its length when there is one, else the plan's default.

use super::goldilocks::schedule::PassSchedule;
use super::module::{cache_path, Device};
use crate::engine::EngineError;
use crate::fsutil;
use crate::trace;
use crate::transform::plan::Plan;
use std::ops::RangeInclusive;

/// Stages per line that [`tune`] times (9 and 10 hold too many values per thread to compete).
pub const CANDIDATES: RangeInclusive<u32> = 5..=super::goldilocks::LATE_MAX_STAGES;

/// What [`tune`] measured for one length.
#[derive(Debug, Clone)]
pub struct Tuning {
    pub log2: u32,
    /// (stages per line, µs per iteration, or why that shape has no plan).
    pub timings: Vec<(u32, Result<f64, String>)>,
    /// The fastest, now stored for this length (None: nothing to tune, or nothing ran).
    pub chosen: Option<u32>,
}

/// The cache file's lines: "log2 stages us_per_iteration"; for each length the last line wins,
/// and lines that do not parse are skipped (a damaged file only costs the tuning).
fn parse(text: &str) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let (Some(Ok(log2)), Some(Ok(stages))) = (words.next().map(str::parse), words.next().map(str::parse)) else {
            continue;
        };
        out.retain(|&(l, _)| l != log2);
        out.push((log2, stages));
    }
    out
}

fn stored(text: &str, log2: u32) -> Option<u32> {
    parse(text).into_iter().find(|&(l, _)| l == log2).map(|(_, k)| k)
}

/// The tuning file of the Goldilocks unit's kernels on this device (their cache key).
fn file_name(dev: &Device) -> Result<String, EngineError> {
    Ok(format!("tune-{}.txt", dev.unit_key(super::goldilocks::UNIT)?))
}

/// A Goldilocks `plan` with the passes stored for its length on this device (when `prove --tune`
/// stored a shape that makes a plan); any other plan as it is.
pub(crate) fn tuned(dev: &Device, plan: Plan) -> Plan {
    trace::mark("gpu: plan built");
    if !super::arith::tunable(&plan) {
        return plan;
    }
    let text = file_name(dev)
        .ok()
        .and_then(|name| cache_path(&name))
        .and_then(|path| std::fs::read_to_string(path).ok())
        .unwrap_or_default();
    trace::mark("gpu: tuning cache read");
    match stored(&text, plan.log2()).filter(|k| CANDIDATES.contains(k)) {
        Some(k) => plan.clone().with_line_stages(k).unwrap_or(plan),
        None => plan,
    }
}

/// Time every candidate shape at p's length over `iters` iterations and store the fastest.
pub fn tune(p: u32, iters: u64) -> Result<Tuning, EngineError> {
    let plan = Plan::new(p)?;
    let log2 = plan.log2();
    if plan.is_small() {
        return Ok(Tuning { log2, timings: Vec::new(), chosen: None });
    }
    let name = file_name(&Device::open()?)?;
    let mut timings = Vec::new();
    for k in CANDIDATES {
        let timing = match plan.clone().with_line_stages(k) {
            Ok(shaped) => Ok(super::bench_plan(shaped, iters)?),
            Err(e) => Err(e.to_string()),
        };
        timings.push((k, timing));
    }
    let best =
        timings.iter().filter_map(|(k, t)| t.as_ref().ok().map(|us| (*k, *us))).min_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((k, us)) = best {
        let path =
            cache_path(&name).ok_or_else(|| EngineError::Other("no cache directory to keep the tuning in".into()))?;
        let mut text = std::fs::read_to_string(&path).unwrap_or_default();
        text.push_str(&format!("{log2} {k} {us:.2}\n"));
        let stored = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| fsutil::write_atomic(&path, text.as_bytes(), 0o644));
        stored.map_err(|e| EngineError::Other(format!("cannot store the tuning in {}: {e}", path.display())))?;
    }
    Ok(Tuning { log2, timings, chosen: best.map(|(k, _)| k) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_line_for_a_length_wins_and_junk_is_skipped() {
        let text = "20 6 70.1\n22 7 270.0\ngarbage\n20 x 1\n\n20 5 65.2\n21 8\n";
        assert_eq!(stored(text, 20), Some(5));
        assert_eq!(stored(text, 22), Some(7));
        assert_eq!(stored(text, 21), Some(8));
        assert_eq!(stored(text, 23), None);
        assert_eq!(stored("", 20), None);
        assert_eq!(parse(text), vec![(22, 7), (20, 5), (21, 8)]);
    }

    #[test]
    fn every_candidate_makes_a_plan_at_the_tuned_lengths() {
        // The lengths a tuning can store (above the one-block kernel) accept every candidate,
        // so a stored choice is never silently dropped for them.
        for p in [86_243u32, 1_257_787, 20_996_011, 82_589_933, 136_279_841] {
            let plan = Plan::new(p).unwrap();
            assert!(!plan.is_small());
            for k in CANDIDATES {
                let shaped = plan.clone().with_line_stages(k).unwrap();
                assert!(shaped.global_passes().iter().all(|&s| s <= k), "p={p} k={k}");
            }
        }
    }
}
