//! Opening the GPUs ahead of need. The driver's start (cuInit) and each GPU's primary context
//! take ~0.5 s each on a 4×H200 host, and a replay needs them only after it has read and checked
//! its certificate and points (~0.5 s for a 64 MB certificate; bench/notes/gpu.md, 2026-11-26
//! 20:50). [`WarmUp::start`] does that opening on a thread meanwhile; the engines then retain the
//! primary contexts already made instead of making them, and the warm-up lets go of each one as
//! its engine takes it over ([`taken_over`]), so that it is released with the engine, in the
//! engine's thread. This module owns that thread and the contexts not yet taken over; dropping
//! the [`WarmUp`] waits for the thread (the process never exits in the middle of the driver's
//! start) and releases those in parallel.

use super::driver::device_count;
use cudarc::driver::CudaContext;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

/// Contexts the warm-up opened that no engine has taken over yet, with their CUDA ordinals.
static WAITING: Mutex<Vec<(usize, Arc<CudaContext>)>> = Mutex::new(Vec::new());

fn waiting() -> std::sync::MutexGuard<'static, Vec<(usize, Arc<CudaContext>)>> {
    WAITING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// GPUs being opened on a thread; dropping it waits for the thread and releases what no engine
/// took over.
#[derive(Debug)]
pub struct WarmUp(Option<JoinHandle<()>>);

impl WarmUp {
    /// Start opening `devices` (CUDA ordinals; `None`: every GPU of the host), each on its own
    /// thread. Failures are silent: the engine that opens the GPU later reports them.
    pub fn start(devices: Option<Vec<usize>>) -> WarmUp {
        WarmUp(Some(std::thread::spawn(move || {
            let Ok(count) = device_count() else { return };
            let ordinals: Vec<usize> = devices.unwrap_or_else(|| (0..count).collect());
            std::thread::scope(|s| {
                for d in ordinals.into_iter().filter(|&d| d < count) {
                    s.spawn(move || {
                        if let Ok(c) = CudaContext::new(d) {
                            waiting().push((d, c));
                        }
                    });
                }
            });
        })))
    }
}

/// GPU `ordinal` has been opened by an engine, which holds its context now: the warm-up's
/// reference to it (if any) goes (a release that only counts down; the engine's keeps it open).
pub(crate) fn taken_over(ordinal: usize) {
    waiting().retain(|(d, _)| *d != ordinal);
}

impl Drop for WarmUp {
    /// Waits for the opening, then releases the contexts no engine took over side by side (one
    /// by one, releasing 4 primary contexts took ~0.3 s).
    fn drop(&mut self) {
        if let Some(h) = self.0.take() {
            let _ = h.join();
        }
        let left = std::mem::take(&mut *waiting());
        std::thread::scope(|s| {
            for (_, c) in left {
                s.spawn(move || drop(c));
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Where CUDA is missing (CI) the thread ends at once, holds nothing, and the drop does not
    /// wait on anything; where it is present, the drop waits for the opening and releases it.
    #[test]
    fn a_warm_up_is_dropped_cleanly_with_or_without_cuda() {
        let t = Instant::now();
        drop(WarmUp::start(None));
        drop(WarmUp::start(Some(vec![0, 7])));
        taken_over(0);
        assert!(waiting().is_empty());
        if device_count().is_err() {
            assert!(t.elapsed() < Duration::from_secs(5), "took {:?}", t.elapsed());
        }
    }
}
