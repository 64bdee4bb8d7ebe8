//! GMP spot checks during a run: a pool of CPU threads takes the engine's residue at iteration
//! k, computes iterations k+1..k+m with GMP (a different shift count, different code), and the
//! driver compares the result with the engine's own residue at k+m. The queue is bounded and
//! submission never blocks, so the engine is never stalled; m adapts to the measured GMP speed
//! so the pool keeps up.

use crate::cpu_ref::GmpEngine;
use crate::engine::Engine;
use crate::exponent::TestKind;
use crate::residue::Residue;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

/// One spot check: from (k, x_k), m iterations.
#[derive(Debug, Clone)]
pub struct SpotJob {
    pub from: u64,
    pub start: Residue,
    pub iterations: u64,
}

/// A finished spot check: the hash of GMP's x_{from+iterations}.
#[derive(Debug, Clone)]
pub struct SpotResult {
    pub from: u64,
    pub to: u64,
    pub hash: [u8; 32],
    pub seconds: f64,
}

/// The pool of spot-check threads.
pub struct SpotPool {
    tx: Option<SyncSender<SpotJob>>,
    rx: Receiver<SpotResult>,
    threads: Vec<JoinHandle<()>>,
    in_flight: usize,
    capacity: usize,
    /// Measured GMP seconds per iteration (None until a job finished).
    secs_per_iter: Option<f64>,
}

impl SpotPool {
    /// Start `threads` workers (at least one) for exponent p and kind.
    pub fn new(p: u32, kind: TestKind, threads: usize) -> Self {
        let threads = threads.max(1);
        let (tx, job_rx) = sync_channel::<SpotJob>(threads);
        let (res_tx, rx) = std::sync::mpsc::channel();
        let job_rx = Arc::new(Mutex::new(job_rx));
        let handles = (0..threads)
            .map(|i| {
                let job_rx = Arc::clone(&job_rx);
                let res_tx = res_tx.clone();
                std::thread::spawn(move || loop {
                    let job = match job_rx.lock().map(|r| r.recv()) {
                        Ok(Ok(job)) => job,
                        _ => return,
                    };
                    let t = Instant::now();
                    // A shift of its own, unlike the engine's.
                    let shift = ((job.from.wrapping_mul(2654435761) + i as u64 + 1) % p as u64) as u32;
                    let mut e = GmpEngine::new(p, kind, shift);
                    let hash = e
                        .load(&job.start)
                        .and_then(|_| e.iterate(job.iterations))
                        .and_then(|_| e.read())
                        .map(|r| r.hash())
                        .unwrap_or([0; 32]);
                    let r = SpotResult {
                        from: job.from,
                        to: job.from + job.iterations,
                        hash,
                        seconds: t.elapsed().as_secs_f64(),
                    };
                    if res_tx.send(r).is_err() {
                        return;
                    }
                })
            })
            .collect();
        SpotPool { tx: Some(tx), rx, threads: handles, in_flight: 0, capacity: threads, secs_per_iter: None }
    }

    /// Is there room for another job right now?
    pub fn has_room(&self) -> bool {
        self.in_flight < self.capacity
    }

    /// How many iterations a job should cover so that it takes about `budget_secs` of GMP time
    /// (1 until the speed is known), at most `max`.
    pub fn choose_iterations(&self, budget_secs: f64, max: u64) -> u64 {
        match self.secs_per_iter {
            Some(s) if s > 0.0 => ((budget_secs / s) as u64).clamp(1, max.max(1)),
            _ => 1,
        }
    }

    /// Submit without blocking; false if the queue is full.
    pub fn submit(&mut self, job: SpotJob) -> bool {
        let Some(tx) = &self.tx else { return false };
        match tx.try_send(job) {
            Ok(()) => {
                self.in_flight += 1;
                true
            }
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => false,
        }
    }

    fn account(&mut self, r: &SpotResult) {
        self.in_flight -= 1;
        let s = r.seconds / (r.to - r.from).max(1) as f64;
        self.secs_per_iter = Some(self.secs_per_iter.map_or(s, |old| 0.7 * old + 0.3 * s));
    }

    /// Results finished so far (non-blocking).
    pub fn poll(&mut self) -> Vec<SpotResult> {
        let got: Vec<SpotResult> = self.rx.try_iter().collect();
        got.iter().for_each(|r| self.account(r));
        got
    }

    /// Wait for one job in flight (if any) and return its result.
    pub fn drain_one(&mut self) -> Option<SpotResult> {
        if self.in_flight == 0 {
            return None;
        }
        let r = self.rx.recv().ok()?;
        self.account(&r);
        Some(r)
    }

    /// Wait for every job in flight and return their results.
    pub fn drain(&mut self) -> Vec<SpotResult> {
        let mut out = Vec::new();
        while self.in_flight > 0 {
            match self.rx.recv() {
                Ok(r) => {
                    self.account(&r);
                    out.push(r);
                }
                Err(_) => break,
            }
        }
        out
    }

    /// Forget the jobs in flight (after a rollback their results no longer matter).
    pub fn discard(&mut self) {
        self.drain();
    }
}

impl Drop for SpotPool {
    fn drop(&mut self) {
        self.tx.take();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computes_the_same_as_the_engine() {
        let p = 4423;
        let mut pool = SpotPool::new(p, TestKind::Ll, 2);
        let mut e = GmpEngine::new(p, TestKind::Ll, 99);
        e.load(&Residue::from_u64(p, 4)).unwrap();
        e.iterate(100).unwrap();
        let x100 = e.read().unwrap();
        e.iterate(25).unwrap();
        let x125 = e.read().unwrap();
        assert!(pool.submit(SpotJob { from: 100, start: x100.clone(), iterations: 25 }));
        assert!(pool.submit(SpotJob { from: 100, start: x100, iterations: 24 }));
        let mut r = pool.drain();
        r.sort_by_key(|r| r.to);
        assert_eq!((r[0].to, r[1].to), (124, 125));
        assert_ne!(r[0].hash, x125.hash());
        assert_eq!(r[1].hash, x125.hash());
        assert!(pool.choose_iterations(1.0, 1000) >= 1);
    }
}
