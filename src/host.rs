//! A one-line description of the machine a test ran on (host name, CPU model, core count), for
//! certificates and result lines. The GPU, when used, is named by the engine's own description.
//! Also the limits on thread-count options: what this machine can run at once.

/// `"host <name>, <cpu model> x<cores>"` from what Linux exposes; missing pieces are left out.
pub fn describe() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).ok();
    let cpu = std::fs::read_to_string("/proc/cpuinfo").ok().and_then(|s| {
        s.lines().find(|l| l.starts_with("model name")).and_then(|l| l.split(':').nth(1)).map(|m| m.trim().to_string())
    });
    let cores = cores();
    let mut parts = Vec::new();
    if let Some(n) = name {
        parts.push(format!("host {n}"));
    }
    parts.push(format!("{} x{cores}", cpu.unwrap_or_else(|| std::env::consts::ARCH.to_string())));
    parts.join(", ")
}

/// Threads this machine can run at once (at least 1).
pub fn cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// Spot-check threads for one of `workers` workers (one per GPU) sharing a machine of `cores`
/// cores: its share of the cores less one, for the thread that drives its engine, and at least
/// one. One worker gets all cores but one; workers started one by one (`--device N`) must not
/// each count on every core, or their threads outnumber the cores and the threads that feed the
/// GPUs wait for one.
pub fn spot_threads_per_worker(cores: usize, workers: usize) -> usize {
    (cores / workers.max(1)).saturating_sub(1).max(1)
}

/// A thread count asked for by `option` (e.g. "--jobs"), clamped to what the machine runs at
/// once (more threads than cores only compete for them); the note says so when it clamped.
/// Zero is an error: the caller has its own way to turn the work off.
pub fn clamp_threads(option: &str, requested: usize) -> Result<(usize, Option<String>), String> {
    clamp_threads_to(option, requested, cores())
}

fn clamp_threads_to(option: &str, requested: usize, cores: usize) -> Result<(usize, Option<String>), String> {
    match requested {
        0 => Err(format!("{option} must be at least 1")),
        n if n > cores => Ok((
            cores,
            Some(format!("{option} {n} is more than the {cores} threads this machine runs at once; using {cores}")),
        )),
        n => Ok((n, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_split_the_cores() {
        assert_eq!(spot_threads_per_worker(32, 1), 31);
        assert_eq!(spot_threads_per_worker(32, 2), 15);
        assert_eq!(spot_threads_per_worker(16, 2), 7);
        assert_eq!(spot_threads_per_worker(64, 4), 15);
        // Never none, never more than the cores in all (a driver thread each included).
        for cores in 1..40 {
            for workers in 1..9 {
                let n = spot_threads_per_worker(cores, workers);
                assert!(n >= 1);
                assert!(workers * (n + 1) <= cores.max(2 * workers), "{cores} cores, {workers} workers: {n}");
            }
        }
    }

    #[test]
    fn thread_counts_are_clamped_to_the_cores() {
        assert_eq!(clamp_threads_to("--jobs", 3, 8), Ok((3, None)));
        assert_eq!(clamp_threads_to("--jobs", 8, 8), Ok((8, None)));
        let (n, note) = clamp_threads_to("--jobs", 10000, 8).unwrap();
        assert_eq!(n, 8);
        assert!(note.unwrap().contains("--jobs 10000"));
        assert_eq!(clamp_threads_to("--spot-threads", 0, 8), Err("--spot-threads must be at least 1".into()));
        assert!(clamp_threads("--jobs", usize::MAX).unwrap().0 == cores());
    }
}
