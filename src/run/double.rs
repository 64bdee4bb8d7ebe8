//! The exact LL check (`--ll-check double`): a second engine instance with another shift count
//! recomputes each segment from the last confirmed state, and the segment's end is confirmed only
//! when both engines' residues hash the same. The two compute on different data (the shift
//! rotates every word), so one fault cannot make them agree; a disagreement rolls the run back to
//! the confirmed state. Costs a second pass over every iteration (docs/testing.md); with GMP the
//! second pass runs on a thread of its own, beside the first ([`Shadow::background`]).

use crate::engine::{Engine, EngineError};
use crate::residue::Residue;
use std::collections::VecDeque;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;

/// Below this exponent `--ll-check auto` checks every LL segment twice: a whole test there takes
/// seconds to minutes on a GPU (and at most minutes on the CPU up to ~100,000), so exactness costs
/// little; above it the Jacobi checks run and only a "prime" result is recomputed.
pub const AUTO_DOUBLE_BELOW: u32 = 1_000_000;

/// How many segments the main engine may run ahead of the second one's verdicts. A background
/// second engine (GMP) that falls behind (a loaded machine) would otherwise let the main one run
/// on unchecked, far past a fault, and hold a residue for every segment in between; at this bound
/// a fault is caught within a few segments of where it happened.
pub const MAX_AHEAD: usize = 4;

/// Does `--ll-check auto` check M_p's LL test twice?
pub fn cheap(p: u32) -> bool {
    p < AUTO_DOUBLE_BELOW
}

/// The shift count for the second engine: as far from the first as the exponent allows.
pub fn other_shift(p: u32, shift: u32) -> u32 {
    ((shift as u64 + (p as u64 / 2).max(1)) % p.max(1) as u64) as u32
}

/// One segment for the second engine: from the main engine's `start` = x_from, reach `hash`
/// (the main engine's x_to) in `to − from` iterations?
#[derive(Debug, Clone)]
pub struct Segment {
    pub from: u64,
    pub start: Residue,
    pub to: u64,
    pub hash: [u8; 32],
}

/// Does `engine`, loaded with the segment's start, reach its hash?
fn replay(engine: &mut dyn Engine, s: &Segment) -> Result<bool, EngineError> {
    debug_assert!(s.to >= s.from);
    engine.load(&s.start)?;
    engine.iterate(s.to - s.from)?;
    Ok(engine.read()?.hash() == s.hash)
}

/// A verdict of the background thread, tagged with the generation of its segment.
type Verdict = (u64, Result<bool, EngineError>);

/// Where the second engine runs.
enum Runner<'a> {
    /// On the driver's thread, at submission (a GPU engine: both share the device anyway).
    Inline { engine: &'a mut dyn Engine, done: VecDeque<Result<bool, EngineError>> },
    /// On a thread of its own (GMP: the two runs take two cores, in the time of one).
    Thread { tx: Option<Sender<(u64, Segment)>>, rx: Receiver<Verdict>, handle: Option<JoinHandle<()>> },
}

/// The second engine of a doubly checked LL run. Segments are submitted in order, each from
/// the end of the one before (the first from a confirmed state); their verdicts come back in
/// the same order.
pub struct Shadow<'a> {
    runner: Runner<'a>,
    /// Segments of the current generation whose verdict has not been taken.
    in_flight: usize,
    /// Bumped by [`Shadow::discard`]: verdicts of older segments are dropped.
    generation: u64,
}

impl<'a> Shadow<'a> {
    /// A second engine that replays each segment when it is submitted.
    pub fn inline(engine: &'a mut dyn Engine) -> Self {
        Shadow { runner: Runner::Inline { engine, done: VecDeque::new() }, in_flight: 0, generation: 0 }
    }

    /// A second engine on a thread of its own, replaying segments while the main engine goes on.
    pub fn background(mut engine: Box<dyn Engine>) -> Self {
        let (tx, jobs) = channel::<(u64, Segment)>();
        let (verdicts, rx) = channel::<Verdict>();
        let handle = std::thread::spawn(move || {
            for (generation, s) in jobs {
                if verdicts.send((generation, replay(engine.as_mut(), &s))).is_err() {
                    return;
                }
            }
        });
        Shadow { runner: Runner::Thread { tx: Some(tx), rx, handle: Some(handle) }, in_flight: 0, generation: 0 }
    }

    /// Submit the next segment.
    pub fn submit(&mut self, s: Segment) -> Result<(), EngineError> {
        match &mut self.runner {
            Runner::Inline { engine, done } => done.push_back(replay(&mut **engine, &s)),
            Runner::Thread { tx, .. } => tx
                .as_ref()
                .and_then(|tx| tx.send((self.generation, s)).ok())
                .ok_or_else(|| EngineError::Other("the second engine's thread stopped".into()))?,
        }
        self.in_flight += 1;
        Ok(())
    }

    /// The verdict of the oldest segment in flight: does the second engine agree? None when
    /// none is in flight, or (unless `wait`) when it is not in yet.
    pub fn next_verdict(&mut self, wait: bool) -> Result<Option<bool>, EngineError> {
        if self.in_flight == 0 {
            return Ok(None);
        }
        let verdict = match &mut self.runner {
            Runner::Inline { done, .. } => done.pop_front(),
            Runner::Thread { rx, .. } => loop {
                let got = if wait { rx.recv().ok() } else { rx.try_recv().ok() };
                match got {
                    Some((g, v)) if g == self.generation => break Some(v),
                    Some(_) => continue, // a segment from before a rollback
                    None if wait => return Err(EngineError::Other("the second engine's thread stopped".into())),
                    None => break None,
                }
            },
        };
        match verdict {
            Some(v) => {
                self.in_flight -= 1;
                v.map(Some)
            }
            None => Ok(None),
        }
    }

    /// Forget the segments in flight (the run rolled back; their verdicts no longer matter).
    pub fn discard(&mut self) {
        if let Runner::Inline { done, .. } = &mut self.runner {
            done.clear();
        }
        self.generation += 1;
        self.in_flight = 0;
    }
}

impl Drop for Shadow<'_> {
    fn drop(&mut self) {
        if let Runner::Thread { tx, handle, .. } = &mut self.runner {
            drop(tx.take()); // the thread ends after the segment it is on
            if let Some(h) = handle.take() {
                let _ = h.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu_ref::GmpEngine;
    use crate::exponent::TestKind;

    #[test]
    fn other_shift_differs_and_is_in_range() {
        for p in [3u32, 5, 7, 89, 521, 86243] {
            for s in [0, 1, p / 2, p - 1] {
                let t = other_shift(p, s);
                assert!(t < p && t != s, "p={p} s={s} t={t}");
            }
        }
    }

    /// The segments of a run of `k` iterations from `start` in steps of `every`, by `main`;
    /// the one ending at `flip_at` is corrupted.
    fn segments(main: &mut GmpEngine, start: &Residue, k: u64, every: u64, flip_at: Option<u64>) -> Vec<Segment> {
        let (mut from, mut x) = (0, start.clone());
        let mut out = Vec::new();
        while from < k {
            let to = (from + every).min(k);
            main.load(&x).unwrap();
            main.iterate(to - from).unwrap();
            if flip_at == Some(to) {
                main.inject_fault(3, 17).unwrap();
            }
            let y = main.read().unwrap();
            out.push(Segment { from, start: x, to, hash: y.hash() });
            (from, x) = (to, y);
        }
        out
    }

    fn verdicts(shadow: &mut Shadow, segs: &[Segment]) -> Vec<bool> {
        for s in segs {
            shadow.submit(s.clone()).unwrap();
        }
        let v: Vec<bool> = std::iter::from_fn(|| shadow.next_verdict(true).unwrap()).collect();
        assert_eq!(shadow.next_verdict(true).unwrap(), None);
        v
    }

    #[test]
    fn both_runners_agree_with_right_segments_and_not_with_a_flipped_one() {
        let p = 4423;
        let mut main = GmpEngine::new(p, TestKind::Ll, 5);
        let start = Residue::from_u64(p, 4);
        let segs = segments(&mut main, &start, 1000, 100, Some(600));
        let want: Vec<bool> = segs.iter().map(|s| s.to != 600).collect();
        let mut second = GmpEngine::new(p, TestKind::Ll, other_shift(p, 5));
        assert_eq!(verdicts(&mut Shadow::inline(&mut second), &segs), want);
        let mut bg = Shadow::background(Box::new(GmpEngine::new(p, TestKind::Ll, other_shift(p, 5))));
        assert_eq!(verdicts(&mut bg, &segs), want);
    }

    #[test]
    fn discarded_segments_give_no_verdict() {
        let p = 4423;
        let mut main = GmpEngine::new(p, TestKind::Ll, 0);
        let segs = segments(&mut main, &Residue::from_u64(p, 4), 400, 100, None);
        let mut bg = Shadow::background(Box::new(GmpEngine::new(p, TestKind::Ll, 9)));
        // A wrong segment, then a rollback: what was in flight is dropped, later ones count.
        let mut wrong = segs[0].clone();
        wrong.hash = [0; 32];
        bg.submit(wrong).unwrap();
        bg.submit(segs[1].clone()).unwrap();
        bg.discard();
        assert_eq!(bg.next_verdict(true).unwrap(), None);
        assert_eq!(verdicts(&mut bg, &segs), [true; 4]);
    }
}
