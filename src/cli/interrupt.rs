//! Ctrl-C for `prove`: the first interrupt asks the run to save a verified state and stop (exit
//! status [`EXIT_INTERRUPTED`]); a second, later one quits at once.

use anyhow::{Context, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Exit status after an interruption that saved the state (128 + SIGINT).
pub const EXIT_INTERRUPTED: i32 = 130;
/// A second interrupt sooner than this after the first is the same signal delivered twice.
const DUPLICATE_INTERRUPT: Duration = Duration::from_secs(1);

/// A flag that Ctrl-C sets: the run saves a verified state and stops. A second, later Ctrl-C
/// quits at once.
pub fn interrupt_flag() -> Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        let first = std::sync::OnceLock::new();
        ctrlc::set_handler(move || {
            if stop.swap(true, Ordering::SeqCst) {
                // A signal sent to the process group (GNU `timeout` without --foreground, a
                // supervisor) arrives twice at once: only a later, deliberate one quits.
                if first.get().is_some_and(|t: &Instant| t.elapsed() < DUPLICATE_INTERRUPT) {
                    return;
                }
                eprintln!("\nsecond interrupt: exiting without saving");
                std::process::exit(EXIT_INTERRUPTED);
            }
            let _ = first.set(Instant::now());
            eprintln!("\ninterrupt: saving a verified checkpoint, then exiting (Ctrl-C again to quit at once)");
        })
        .context("cannot install the Ctrl-C handler")?;
    }
    Ok(stop)
}
