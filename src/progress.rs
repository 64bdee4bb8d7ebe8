//! Progress reporting for long work: a progress bar (iteration, %, ms/iter, ETA) when stderr is a
//! terminal; plain lines every 30 s otherwise, so short runs stay quiet in a pipe or CI.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

const PLAIN_EVERY: Duration = Duration::from_secs(30);

/// A progress reporter for one long task counted in iterations.
pub struct Progress {
    label: String,
    total: u64,
    bar: Option<ProgressBar>,
    start: Instant,
    start_done: u64,
    last_plain: Instant,
    enabled: bool,
}

/// A duration as "1h02m03s" / "2m03s" / "3s".
fn hms(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, m, sec) => format!("{m}m{sec:02}s"),
        (h, m, sec) => format!("{h}h{m:02}m{sec:02}s"),
    }
}

impl Progress {
    /// A reporter that draws on stderr: a bar on a terminal, periodic lines otherwise.
    pub fn new(label: &str, total: u64, start_done: u64) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            b.set_style(
                ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({percent}%) {prefix} ETA {eta}")
                    .expect("static template is valid")
                    .progress_chars("=> "),
            );
            b.set_message(label.to_string());
            b.set_position(start_done);
            b
        });
        Progress {
            label: label.to_string(),
            total,
            bar,
            start: Instant::now(),
            start_done,
            last_plain: Instant::now(),
            enabled: true,
        }
    }

    /// A reporter that prints nothing (library use, tests).
    pub fn hidden() -> Self {
        let mut p = Progress::new("", 0, 0);
        p.bar = None;
        p.enabled = false;
        p
    }

    /// Milliseconds per iteration measured since this reporter started.
    pub fn ms_per_iter(&self, done: u64) -> f64 {
        let n = done.saturating_sub(self.start_done);
        if n == 0 {
            return 0.0;
        }
        self.start.elapsed().as_secs_f64() * 1e3 / n as f64
    }

    /// Report that `done` of `total` iterations are complete.
    pub fn update(&mut self, done: u64) {
        if !self.enabled {
            return;
        }
        let ms = self.ms_per_iter(done);
        if let Some(b) = &self.bar {
            b.set_position(done);
            b.set_prefix(format!("{ms:.4} ms/iter"));
        } else if self.last_plain.elapsed() >= PLAIN_EVERY {
            self.last_plain = Instant::now();
            let eta = Duration::from_secs_f64(ms * (self.total.saturating_sub(done)) as f64 / 1e3);
            eprintln!(
                "{} iteration {}/{} ({:.2}%), {:.4} ms/iter, ETA {}",
                self.label,
                done,
                self.total,
                100.0 * done as f64 / self.total.max(1) as f64,
                ms,
                hms(eta)
            );
        }
    }

    /// Remove the bar (plain mode prints nothing more).
    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}
