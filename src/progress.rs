//! Progress reporting for long work: a progress bar (iteration, %, ms/iter, ETA) when stderr is a
//! terminal; plain lines every 30 s otherwise, so short runs stay quiet in a pipe or CI. A
//! [`ProgressLog`] (the work directory's `progress.log`) also gets one line per checkpoint.

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
    log: Option<ProgressLog>,
}

/// A file that a person or a script tails: one line per checkpoint of the test in progress
/// (`YYYY-MM-DD HH:MM:SS <label> iteration k/total (x.xx%), u us/iter, ETA t, res64 R`), each
/// line appended with one write, so that several workers can share the file.
pub struct ProgressLog {
    file: std::fs::File,
}

impl ProgressLog {
    /// Append to `path` (created if missing).
    pub fn open(path: &std::path::Path) -> std::io::Result<Self> {
        Ok(ProgressLog { file: std::fs::OpenOptions::new().create(true).append(true).open(path)? })
    }

    /// Append `text` as one line, time-stamped (UTC). A log that cannot be written is not worth
    /// stopping a test for: the error is ignored.
    pub fn line(&mut self, text: &str) {
        use std::io::Write;
        let stamp = crate::cert::gimps_utc(std::time::SystemTime::now());
        let _ = self.file.write_all(format!("{stamp} {text}\n").as_bytes());
    }
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
    pub fn new(label: &str, total: u64) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            b.set_style(
                ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({percent}%) {prefix} ETA {eta}")
                    .expect("static template is valid")
                    .progress_chars("=> "),
            );
            b.set_message(label.to_string());
            b
        });
        Progress {
            label: label.to_string(),
            total,
            bar,
            start: Instant::now(),
            start_done: 0,
            last_plain: Instant::now(),
            enabled: true,
            log: None,
        }
    }

    /// Also write a line to `log` at every checkpoint ([`Progress::checkpoint`]).
    pub fn with_log(mut self, log: ProgressLog) -> Self {
        self.log = Some(log);
        self
    }

    /// The run filed a checkpoint at iteration `done`, residue `res64`: one line in the log.
    pub fn checkpoint(&mut self, done: u64, res64: u64) {
        if self.log.is_none() {
            return;
        }
        let ms = self.ms_per_iter(done);
        let eta = Duration::from_secs_f64(ms * self.total.saturating_sub(done) as f64 / 1e3);
        let line = format!(
            "{} iteration {}/{} ({:.2}%), {:.1} us/iter, ETA {}, res64 {res64:016X}",
            self.label,
            done,
            self.total,
            100.0 * done as f64 / self.total.max(1) as f64,
            ms * 1e3,
            hms(eta)
        );
        if let Some(log) = self.log.as_mut() {
            log.line(&line);
        }
    }

    /// A reporter that prints nothing (library use, tests).
    pub fn hidden() -> Self {
        let mut p = Progress::new("", 0);
        p.bar = None;
        p.enabled = false;
        p
    }

    /// The work starts (or resumes) now at `done` iterations: rates and ETAs count from here,
    /// not from iteration 0.
    pub fn start_at(&mut self, done: u64) {
        self.start = Instant::now();
        self.start_done = done;
        self.last_plain = self.start;
        if let Some(b) = &self.bar {
            b.set_position(done);
            b.reset_eta();
        }
    }

    /// Milliseconds per iteration measured since [`Progress::start_at`] (or creation).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resumed_run_rates_only_its_own_iterations() {
        let mut p = Progress::hidden();
        p.start_at(15_444_000);
        std::thread::sleep(Duration::from_millis(20));
        let ms = p.ms_per_iter(15_444_010);
        assert!(ms >= 1.5, "20 ms over 10 iterations gave {ms} ms/iter");
        assert_eq!(p.ms_per_iter(15_444_000), 0.0);
    }

    #[test]
    fn the_log_gets_one_line_per_checkpoint() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("progress.log");
        let mut p = Progress::hidden().with_log(ProgressLog::open(&path).unwrap());
        p.label = "M9689 LL".into();
        p.total = 200;
        p.start_at(0);
        p.checkpoint(50, 0xABCD);
        p.checkpoint(200, 0);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].contains("M9689 LL iteration 50/200 (25.00%)"), "{text}");
        assert!(lines[0].ends_with("res64 000000000000ABCD"), "{text}");
        assert!(lines[1].contains("(100.00%)") && lines[1].contains("ETA 0s"), "{text}");
        // YYYY-MM-DD HH:MM:SS first.
        assert_eq!(&lines[0][4..5], "-");
        assert_eq!(&lines[0][10..11], " ");
        assert_eq!(&lines[0][19..20], " ");
    }

    #[test]
    fn durations_read_as_hours_minutes_seconds() {
        assert_eq!(hms(Duration::from_secs(9)), "9s");
        assert_eq!(hms(Duration::from_secs(125)), "2m05s");
        assert_eq!(hms(Duration::from_secs(3725)), "1h02m05s");
    }
}
