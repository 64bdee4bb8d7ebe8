//! Where a run's time goes on the driver's thread: blocked in the engine (the GPU computing, or
//! GMP squaring on this thread), or in the host's share of the checks (spot checks' results and
//! the waits for them, the second engine's and the Jacobi verdicts, state saves, proof point
//! writes); what is left is the driver's own work (reads' conversion, hashes, checkpoints). A GPU
//! that waits on its host shows as a large host share: the engine keeps going only while the
//! driver has queued work for it.

use std::time::Instant;

/// Seconds of the driver's thread by what it was doing.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LoopTimes {
    /// In engine calls: iterations, reads (the wait for the engine to get there), Gerbicz checks.
    pub engine: f64,
    /// Spot checks: taking results, waiting for room (full coverage) and for the last ones.
    pub spot: f64,
    /// The second engine's verdicts (inline: its own iterations) and the Jacobi symbols computed here.
    pub verdicts: f64,
    /// Saved states written.
    pub saves: f64,
    /// PRP proof points written.
    pub points: f64,
}

/// Which share a timed call counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Share {
    Engine,
    Spot,
    Verdicts,
    Saves,
    Points,
}

impl LoopTimes {
    /// Count the time since `since` in `share`.
    pub fn add(&mut self, share: Share, since: Instant) {
        let s = since.elapsed().as_secs_f64();
        *match share {
            Share::Engine => &mut self.engine,
            Share::Spot => &mut self.spot,
            Share::Verdicts => &mut self.verdicts,
            Share::Saves => &mut self.saves,
            Share::Points => &mut self.points,
        } += s;
    }

    /// The host's share: everything but the engine.
    pub fn host(&self) -> f64 {
        self.spot + self.verdicts + self.saves + self.points
    }

    /// "engine 12.1 s (95.2%), host checks 0.50 s (spot 0.30, verdicts 0, saves 0.10, proof
    /// points 0.10), other 0.11 s" of a run of `total` seconds.
    pub fn describe(&self, total: f64) -> String {
        let other = (total - self.engine - self.host()).max(0.0);
        let pct = |s: f64| if total > 0.0 { 100.0 * s / total } else { 0.0 };
        format!(
            "engine {:.2} s ({:.1}%), host checks {:.2} s ({:.1}%: spot {:.2}, verdicts {:.2}, saves {:.2}, proof points {:.2}), other {:.2} s",
            self.engine,
            pct(self.engine),
            self.host(),
            pct(self.host()),
            self.spot,
            self.verdicts,
            self.saves,
            self.points,
            other
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn shares_add_up_and_are_described() {
        let mut t = LoopTimes::default();
        let start = Instant::now() - Duration::from_millis(20);
        t.add(Share::Saves, start);
        assert!(t.saves >= 0.02 && t.engine == 0.0 && t.host() == t.saves);
        let t = LoopTimes { engine: 9.0, spot: 0.5, verdicts: 0.0, saves: 0.25, points: 0.25 };
        assert_eq!(
            t.describe(10.5),
            "engine 9.00 s (85.7%), host checks 1.00 s (9.5%: spot 0.50, verdicts 0.00, saves 0.25, proof points 0.25), other 0.50 s"
        );
        assert!(LoopTimes::default().describe(0.0).starts_with("engine 0.00 s (0.0%)"));
    }
}
