//! The opt-in start-up trace: with the environment variable MERSENNE_CERT_TRACE set (to
//! anything), [`mark`] prints `trace: <ms since process start> ms  <phase>` on stderr, one line
//! per phase of a run (start-up, GPU opening, the run's end, the certificate), so that the fixed
//! cost of a short run can be located on a machine reached only in batched calls. Unset, a mark
//! costs one check of a flag read from the environment once, and prints nothing. This module
//! owns the time origin ([`init`], called first in `main`) and that flag.

use std::io::Write;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The environment variable that turns the trace on.
pub const VAR: &str = "MERSENNE_CERT_TRACE";

/// Whether marks are printed, and the time they are measured from.
#[derive(Debug, Clone, Copy)]
pub struct Tracer {
    enabled: bool,
    start: Instant,
}

impl Tracer {
    /// A tracer measuring from `start`, printing only when `enabled`.
    pub fn new(enabled: bool, start: Instant) -> Tracer {
        Tracer { enabled, start }
    }

    /// Whether [`Tracer::mark_to`] writes anything.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Write the line for `phase` to `out` when enabled (a failed write is ignored: the trace
    /// never stops a run).
    pub fn mark_to(&self, out: &mut dyn Write, phase: &str) {
        if self.enabled {
            let _ = writeln!(out, "{}", line(self.start.elapsed(), phase));
        }
    }
}

static TRACER: OnceLock<Tracer> = OnceLock::new();

/// The process's tracer: the variable is read on the first call, and the time origin is that
/// first call (made by [`init`] at the top of `main`).
fn tracer() -> &'static Tracer {
    TRACER.get_or_init(|| Tracer::new(std::env::var_os(VAR).is_some(), Instant::now()))
}

/// Fix the time origin and read MERSENNE_CERT_TRACE; call first thing in `main`. Without it the
/// origin is the first [`mark`].
pub fn init() {
    tracer();
}

/// Is the trace on?
pub fn enabled() -> bool {
    tracer().enabled()
}

/// Print `trace: <ms> ms  <phase>` on stderr when the trace is on; nothing otherwise.
pub fn mark(phase: &str) {
    let t = tracer();
    if t.enabled() {
        t.mark_to(&mut std::io::stderr().lock(), phase);
    }
}

/// One trace line: milliseconds since the origin with one decimal, two spaces, the phase.
pub fn line(since: Duration, phase: &str) -> String {
    format!("trace: {:.1} ms  {phase}", since.as_secs_f64() * 1e3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_milliseconds_with_one_decimal_then_the_phase() {
        assert_eq!(line(Duration::from_micros(12_345), "cuda context"), "trace: 12.3 ms  cuda context");
        assert_eq!(line(Duration::ZERO, "args parsed"), "trace: 0.0 ms  args parsed");
        assert_eq!(line(Duration::from_millis(1_500), "exit"), "trace: 1500.0 ms  exit");
    }

    #[test]
    fn disabled_writes_nothing_and_enabled_one_line_per_mark() {
        let start = Instant::now() - Duration::from_millis(5);
        let mut out = Vec::new();
        let off = Tracer::new(false, start);
        off.mark_to(&mut out, "state store opened");
        assert!(!off.enabled());
        assert!(out.is_empty());

        let on = Tracer::new(true, start);
        on.mark_to(&mut out, "state store opened");
        on.mark_to(&mut out, "exit");
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        for (l, phase) in lines.iter().zip(["state store opened", "exit"]) {
            let ms = l.strip_prefix("trace: ").and_then(|r| r.strip_suffix(&format!(" ms  {phase}"))).expect(l);
            assert_eq!(ms.split_once('.').map(|(_, frac)| frac.len()), Some(1), "{l}");
            assert!(ms.parse::<f64>().expect(l) >= 5.0, "{l}");
        }
    }
}
