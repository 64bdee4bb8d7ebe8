//! Who replays which segment: the workers of one host (one per GPU, plus CPU threads running
//! GMP) and the queue that feeds them. Segments are handed out one at a time, longest first, so
//! that no GPU idles at the end; a CPU thread takes the shortest segment left, and only while it
//! would finish it before the GPUs finish the rest of the queue (a CPU segment must never be the
//! last thing running). The workers are a [`Decision`] ([`crate::decide`]): under `--engine auto`
//! it weighs the CPU's and the GPUs' estimated times, and its rates are the CPU threads' rule.

use super::segment::{random_u64, replay_segment_with, ReplayError, Segment};
use crate::decide::{decide, Ask, Decision, EngineKind, Work};
use crate::engine::Engine;
use crate::exponent::TestKind;
use crate::progress::Progress;
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The workers of a replay of `segs` of M_p as `ask` allows: [`decide`] for their work on `jobs`
/// threads (under `--engine auto` the CPU threads alone, or the GPUs with the CPU threads not
/// needed to drive them, whichever finishes first), its line on stderr.
pub fn workers(ask: &Ask, jobs: usize, p: u32, kind: TestKind, segs: &[&Segment]) -> Result<Decision, ReplayError> {
    let work = Work::segments(p, kind, segs.iter().map(|s| s.iterations()), jobs);
    let d = decide(ask, &work)?;
    crate::trace::mark("replay: workers chosen");
    if let Some(why) = &d.why {
        eprintln!("{why}");
    }
    Ok(d)
}

/// The replay of one segment.
#[derive(Debug)]
pub struct SegmentRun {
    /// The hash of the recomputed residue at the segment's end (it matched the certificate's),
    /// or why the segment failed.
    pub verdict: Result<[u8; 32], ReplayError>,
    pub seconds: f64,
    /// "gpu N" or "cpu".
    pub worker: String,
}

/// What a scheduled replay did: per segment (in the order given) its run, `None` for segments
/// not run (an earlier failure stopped the replay, or no worker was left that could take them:
/// a GPU that failed to open leaves its share to the CPU threads only where they finish it in
/// time); and the engines used.
#[derive(Debug)]
pub struct Scheduled {
    pub runs: Vec<Option<SegmentRun>>,
    pub engines: String,
}

impl Scheduled {
    /// Per worker ("gpu N", or "cpu" for all CPU threads together), when a GPU took part:
    /// the segments and iterations it replayed, its busy time (the sum of its segments' times)
    /// and its rate, e.g. "gpu 0: 52 segments, 746,360 iterations, busy 15.25 s, 20.4 µs/iter,
    /// 293 ms/segment". Against a replay on one GPU alone, the rate says how much slower each GPU
    /// was with the others replaying too.
    pub fn busy(&self, segs: &[&Segment]) -> Vec<String> {
        let mut by: BTreeMap<&str, (usize, u64, f64)> = BTreeMap::new();
        for (seg, run) in segs.iter().zip(&self.runs) {
            if let Some(r) = run {
                let e = by.entry(r.worker.as_str()).or_default();
                *e = (e.0 + 1, e.1 + seg.iterations(), e.2 + r.seconds);
            }
        }
        if !by.keys().any(|w| w.starts_with("gpu")) {
            return Vec::new();
        }
        by.into_iter()
            .map(|(worker, (n, iterations, secs))| {
                format!(
                    "{worker}: {n} segments, {iterations} iterations, busy {secs:.2} s, {:.1} µs/iter, {:.0} ms/segment",
                    secs * 1e6 / iterations.max(1) as f64,
                    secs * 1e3 / n as f64
                )
            })
            .collect()
    }
}

struct Queue {
    /// Indices into the segments, longest first.
    order: VecDeque<usize>,
    /// Iterations in `order`.
    iterations: u64,
}

/// Replay `segs` on `workers` (decided for them). With `stop_on_failure` the first failure stops the
/// handing out (segments in flight finish); otherwise every segment is replayed.
pub fn run(segs: &[&Segment], workers: &Decision, stop_on_failure: bool) -> Scheduled {
    let p = workers.work.p;
    let mut order: Vec<usize> = (0..segs.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(segs[i].iterations()), i));
    let queue = Mutex::new(Queue { order: order.into(), iterations: segs.iter().map(|s| s.iterations()).sum::<u64>() });
    let total = segs.iter().map(|s| s.iterations()).sum::<u64>();
    // Rates for the CPU threads' rule, only needed when they share the queue with GPUs (then
    // `auto` timed GMP for the decision).
    let (cpu_us, gpu_us) = match workers.rates {
        Some(rates) if !workers.gpus.is_empty() && workers.cpu_threads > 0 => rates,
        _ => (0.0, 0.0),
    };
    let runs: Mutex<Vec<Option<SegmentRun>>> = Mutex::new((0..segs.len()).map(|_| None).collect());
    let stop = AtomicBool::new(false);
    let done = AtomicU64::new(0);
    let progress = Mutex::new(Progress::new(&format!("replay M{p}"), total));
    let engines = Mutex::new(Vec::new());
    let gpus = workers.gpus.len() as f64;

    let record = |i: usize, run: SegmentRun| {
        if run.verdict.is_err() && stop_on_failure {
            stop.store(true, Ordering::SeqCst);
        }
        runs.lock().expect("no worker panics holding the lock")[i] = Some(run);
    };
    let tick = |by: u64| {
        let d = done.fetch_add(by, Ordering::Relaxed) + by;
        progress.lock().expect("no worker panics holding the lock").update(d);
    };
    let replay_on = |i: usize, engine: &mut dyn Engine, worker: &str| {
        let seg = segs[i];
        let start = Instant::now();
        let verdict = replay_segment_with(seg, engine, &mut |by| tick(by))
            .map(|()| seg.checks.last().map_or_else(|| seg.start.hash(), |c| c.1));
        record(i, SegmentRun { verdict, seconds: start.elapsed().as_secs_f64(), worker: worker.to_string() });
    };
    let gpu_worker = |gpu: usize| {
        let name = format!("gpu {gpu}");
        let mut engine: Option<Box<dyn Engine>> = None;
        loop {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            let Some(i) = ({
                let mut q = queue.lock().expect("no worker panics holding the lock");
                let i = q.order.pop_front();
                if let Some(i) = i {
                    q.iterations -= segs[i].iterations();
                }
                i
            }) else {
                return;
            };
            if engine.is_none() {
                let shift = (random_u64() % u64::from(p)) as u32;
                match workers.open_on(gpu, shift) {
                    Ok(e) => {
                        crate::trace::mark(&format!("replay: {name} engine open"));
                        engines
                            .lock()
                            .expect("no worker panics holding the lock")
                            .push(format!("GPU {gpu}: {}", e.describe()));
                        engine = Some(e);
                    }
                    Err(e) => {
                        // This GPU is out; the segment it took is reported failed, the rest of
                        // the queue goes to the other workers.
                        record(i, SegmentRun { verdict: Err(e.into()), seconds: 0.0, worker: name.clone() });
                        return;
                    }
                }
            }
            replay_on(i, engine.as_deref_mut().expect("opened above"), &name);
        }
    };
    let cpu_worker = || loop {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Some(i) = ({
            let mut q = queue.lock().expect("no worker panics holding the lock");
            let i = if gpus == 0.0 {
                q.order.pop_front()
            } else {
                // The shortest left, if done here before the GPUs are through the rest.
                let fits = q.order.back().is_some_and(|&i| {
                    let n = segs[i].iterations();
                    n as f64 * cpu_us <= (q.iterations - n) as f64 * gpu_us / gpus
                });
                if fits {
                    q.order.pop_back()
                } else {
                    None
                }
            };
            if let Some(i) = i {
                q.iterations -= segs[i].iterations();
            }
            i
        }) else {
            return;
        };
        let shift = (random_u64() % u64::from(p)) as u32;
        match workers.open_cpu(shift) {
            Ok(mut e) => replay_on(i, e.as_mut(), "cpu"),
            Err(e) => record(i, SegmentRun { verdict: Err(e.into()), seconds: 0.0, worker: "cpu".into() }),
        }
    };
    std::thread::scope(|s| {
        for &g in &workers.gpus {
            s.spawn(move || {
                gpu_worker(g);
                crate::trace::mark(&format!("replay: gpu {g} out of segments"));
            });
        }
        // More threads than segments would only wait.
        for _ in 0..workers.cpu_threads.min(segs.len()) {
            s.spawn(cpu_worker);
        }
    });
    progress.into_inner().expect("workers are done").finish();
    let mut engines = engines.into_inner().expect("workers are done");
    if workers.cpu_threads > 0 {
        let what = match workers.engine {
            EngineKind::Twin => format!("the CPU twin in {}", workers.arith.name()),
            _ => "GMP (rug)".to_string(),
        };
        engines.push(format!("{} CPU threads: {what}", workers.cpu_threads.min(segs.len())));
    }
    Scheduled { runs: runs.into_inner().expect("workers are done"), engines: engines.join("; ") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::residue::Residue;

    /// GMP on `threads` threads for M_127's LL segments.
    fn gmp(threads: usize) -> Decision {
        Decision::gmp(Work::segments(127, TestKind::Ll, [125], threads), None)
    }

    /// Segments of M_127's LL chain cut at `cuts`, with their true hashes (GMP, directly).
    fn chain(cuts: &[u64]) -> Vec<Segment> {
        let states = crate::cert::samples::states(TestKind::Ll, 127, cuts);
        let mut out = Vec::new();
        let mut from = (0, Residue::start(127, TestKind::Ll));
        for (&k, r) in cuts.iter().zip(states) {
            out.push(Segment { from: from.0, start: from.1.clone(), checks: vec![(k, r.hash())] });
            from = (k, r);
        }
        out
    }

    #[test]
    fn every_segment_runs_once_on_cpu_threads() {
        let segs = chain(&[3, 40, 41, 90, 125]);
        let refs: Vec<&Segment> = segs.iter().collect();
        for threads in [1, 3, 8] {
            let w = gmp(threads);
            let s = run(&refs, &w, true);
            for (i, r) in s.runs.iter().enumerate() {
                let r = r.as_ref().unwrap_or_else(|| panic!("segment {i} not run with {threads} threads"));
                assert_eq!(*r.verdict.as_ref().unwrap(), segs[i].checks[0].1);
            }
        }
    }

    #[test]
    fn failures_are_reported_and_stop_when_asked() {
        let mut segs = chain(&[10, 20, 30, 40, 50, 60]);
        segs[2].checks[0].1[0] ^= 1;
        let refs: Vec<&Segment> = segs.iter().collect();
        let w = gmp(1);
        // Without stopping every segment runs, and only the bad one fails.
        let all = run(&refs, &w, false);
        let failed: Vec<usize> =
            all.runs.iter().enumerate().filter(|(_, r)| r.as_ref().unwrap().verdict.is_err()).map(|(i, _)| i).collect();
        assert_eq!(failed, vec![2]);
        // With stopping, one thread (equal lengths: in order) stops after the failure.
        let stopped = run(&refs, &w, true);
        assert!(matches!(stopped.runs[2].as_ref().unwrap().verdict, Err(ReplayError::HashMismatch { iteration: 30 })));
        assert!(stopped.runs[3..].iter().all(Option::is_none));
    }

    #[test]
    fn busy_time_per_worker() {
        let segs = chain(&[10, 30, 60, 100, 125]);
        let refs: Vec<&Segment> = segs.iter().collect();
        let run =
            |worker: &str, seconds: f64| Some(SegmentRun { verdict: Ok([0; 32]), seconds, worker: worker.into() });
        let mut s = Scheduled {
            runs: vec![run("gpu 1", 0.5), run("gpu 0", 1.0), run("cpu", 0.25), run("gpu 0", 2.0), None],
            engines: String::new(),
        };
        assert_eq!(
            s.busy(&refs),
            vec![
                "cpu: 1 segments, 30 iterations, busy 0.25 s, 8333.3 µs/iter, 250 ms/segment",
                "gpu 0: 2 segments, 60 iterations, busy 3.00 s, 50000.0 µs/iter, 1500 ms/segment",
                "gpu 1: 1 segments, 10 iterations, busy 0.50 s, 50000.0 µs/iter, 500 ms/segment",
            ]
        );
        // One GPU alone (the baseline of a scaling run); CPU threads alone say nothing new.
        s.runs = vec![run("gpu 0", 1.0), None, None, None, None];
        assert_eq!(s.busy(&refs).len(), 1);
        s.runs = vec![run("cpu", 1.0), run("cpu", 1.0), None, None, None];
        assert!(s.busy(&refs).is_empty());
    }
}
