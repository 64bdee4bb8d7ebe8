//! Opening the GPUs ahead of need. The driver's start (cuInit) and each GPU's primary context
//! take ~0.5 s each on a 4×H200 host, and a replay needs them only after it has read and checked
//! its certificate and points (~0.7 s for a 64 MB certificate; bench/notes/gpu.md, 2026-11-26
//! 20:50). [`WarmUp::start`] does that opening on a thread meanwhile; the engines then retain the
//! primary contexts already made instead of making them. This module owns that thread and the
//! contexts it holds until the [`WarmUp`] is dropped (which waits for the thread, so the process
//! never exits in the middle of the driver's start, and releases them in parallel).

use super::module::device_count;
use cudarc::driver::CudaContext;
use std::sync::Arc;
use std::thread::JoinHandle;

/// GPUs being opened on a thread; dropping it waits for the thread and releases what it opened.
#[derive(Debug)]
pub struct WarmUp(Option<JoinHandle<Vec<Arc<CudaContext>>>>);

impl WarmUp {
    /// Start opening `devices` (CUDA ordinals; `None`: every GPU of the host), each on its own
    /// thread. Failures are silent: the engine that opens the GPU later reports them.
    pub fn start(devices: Option<Vec<usize>>) -> WarmUp {
        WarmUp(Some(std::thread::spawn(move || {
            let Ok(count) = device_count() else { return Vec::new() };
            let ordinals: Vec<usize> = devices.unwrap_or_else(|| (0..count).collect());
            std::thread::scope(|s| {
                let opening: Vec<_> = ordinals
                    .into_iter()
                    .filter(|&d| d < count)
                    .map(|d| s.spawn(move || CudaContext::new(d).ok()))
                    .collect();
                opening.into_iter().filter_map(|h| h.join().ok().flatten()).collect()
            })
        })))
    }
}

impl Drop for WarmUp {
    /// Waits for the opening, then releases the contexts side by side: one by one, releasing the
    /// last reference to 4 primary contexts took ~0.3 s at the end of a replay.
    fn drop(&mut self) {
        if let Some(contexts) = self.0.take().and_then(|h| h.join().ok()) {
            std::thread::scope(|s| {
                for c in contexts {
                    s.spawn(move || drop(c));
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Where CUDA is missing (CI) the thread ends at once and the drop does not wait on anything;
    /// where it is present, the drop waits for the opening and releases it.
    #[test]
    fn a_warm_up_is_dropped_cleanly_with_or_without_cuda() {
        let t = Instant::now();
        drop(WarmUp::start(None));
        drop(WarmUp::start(Some(vec![0, 7])));
        if device_count().is_err() {
            assert!(t.elapsed() < Duration::from_secs(5), "took {:?}", t.elapsed());
        }
    }
}
