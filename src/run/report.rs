//! What a finished test reports: the certificate body assembled from a run, and the GIMPS-style
//! JSON result line printed on stdout.

use crate::cert::{CertBody, CheckLog, Outcome, Program};
use crate::engine::Engine;
use crate::exponent::TestKind;
use crate::proof::session::{BuiltProof, FILE_VERSION, HASH_BITS};
use crate::run::RunRecord;
use crate::transform::plan::Arith;
use serde_json::{json, Value};

pub const PROGRAM_NAME: &str = "mersenne-cert";
pub const PROGRAM_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Everything about a test besides the run record itself.
#[derive(Debug, Clone)]
pub struct TestInfo {
    pub p: u32,
    pub kind: TestKind,
    pub shift: u32,
    pub engine: String,
    pub fft_length: Option<usize>,
    /// The transform's arithmetic; None for GMP.
    pub arith: Option<Arith>,
    pub host: String,
    pub started: String,
    pub finished: String,
    /// The PRP proof of the run, when one was built.
    pub proof: Option<BuiltProof>,
}

impl TestInfo {
    /// The test that `rec` records, run on `engine` on this host, finished now.
    pub fn of_run(engine: &dyn Engine, rec: &RunRecord, proof: Option<BuiltProof>) -> TestInfo {
        TestInfo {
            p: engine.exponent(),
            kind: engine.kind(),
            shift: rec.shift,
            engine: engine.describe(),
            fft_length: engine.fft_length(),
            arith: engine.arith(),
            host: crate::host::describe(),
            started: rec.started.clone(),
            finished: now_rfc3339(),
            proof,
        }
    }
}

pub fn program() -> Program {
    Program { name: PROGRAM_NAME.into(), version: PROGRAM_VERSION.into() }
}

/// Current time as RFC 3339 UTC, seconds precision.
pub fn now_rfc3339() -> String {
    crate::cert::rfc3339_utc(std::time::SystemTime::now())
}

/// The certificate body for a finished run.
pub fn cert_body(info: &TestInfo, rec: &RunRecord, outcome: &Outcome) -> CertBody {
    CertBody {
        exponent: info.p,
        kind: info.kind,
        shift: info.shift,
        iterations: rec.iterations,
        program: program(),
        engine: info.engine.clone(),
        fft_length: info.fft_length.map(|n| n as u64),
        arith: info.arith.map(|a| a.name().to_string()),
        host: info.host.clone(),
        started: info.started.clone(),
        finished: info.finished.clone(),
        checkpoints: rec.checkpoints.clone(),
        result: outcome.clone(),
        checks: rec.checks.clone(),
        proof: info.proof.as_ref().map(|p| serde_bytes::ByteBuf::from(p.bytes.clone())),
    }
}

/// What a result line says besides the run itself: the assignment and who ran it, and what was
/// published next to it.
#[derive(Debug, Clone, Copy, Default)]
pub struct LineContext<'a> {
    /// The PrimeNet assignment id of the worktodo line (absent for `N/A` or none).
    pub aid: Option<&'a str>,
    pub user: Option<&'a str>,
    pub computer: Option<&'a str>,
    /// The proof, only once its file is written: PrimeNet waits for the file whose MD5 the line
    /// names, so a line never names a proof that was not written.
    pub proof_file: Option<&'a BuiltProof>,
    /// blake3 of the certificate, when one was written.
    pub certificate: Option<&'a str>,
}

/// The transform length reported as `fft-length`: the engine's own, or for an engine without a
/// transform (GMP) the length the GPU plan would take for p (absent only where no plan exists,
/// p below the smallest the carry scheme handles).
pub fn fft_length(engine_length: Option<usize>, p: u32) -> Option<usize> {
    engine_length.or_else(|| crate::transform::plan::Plan::new(p).ok().map(|plan| plan.n()))
}

/// `errors`: the errors the test's checks found and recovered from (a rollback to the last
/// verified state), as prime95 names them, `{"gerbicz":N}` for PRP and `{"Jacobi":N}` for LL,
/// then, only when there were some, `"double-check":N` (LL's second engine disagreed) and
/// `"spot":N` (a GMP spot check disagreed). `error-code`: eight hex digits in prime95's layout
/// (its `inc_error_count`, v29.3 on): bits 4-7 count Jacobi errors, bits 20-23 errors found by a
/// high-reliability check (prime95: Gerbicz or a doubled computation; here Gerbicz, the LL double
/// check and the spot checks, which recompute), each saturating at 15; the other fields
/// (round-off, SUMOUT, ...) belong to floating-point transforms and stay 0.
pub fn gimps_errors(kind: TestKind, checks: &CheckLog) -> (Value, String) {
    let count = |key: &str| checks.summary.get(key).copied().unwrap_or(0);
    let (jacobi, double, gerbicz, spot) =
        (count("jacobi_failures"), count("double_failures"), count("gerbicz_failures"), count("spot_failures"));
    let mut errors = serde_json::Map::new();
    match kind {
        TestKind::Prp => errors.insert("gerbicz".into(), json!(gerbicz)),
        TestKind::Ll => errors.insert("Jacobi".into(), json!(jacobi)),
    };
    for (name, n) in [("double-check", double), ("spot", spot)] {
        if n > 0 {
            errors.insert(name.into(), json!(n));
        }
    }
    let jacobi_bits = jacobi.min(0xF) << 4;
    let reliable_bits = (gerbicz + double + spot).min(0xF) << 20;
    (Value::Object(errors), format!("{:08X}", jacobi_bits | reliable_bits))
}

/// LL: the share of the test's iterations an exact check recomputed (the second engine of
/// `--ll-check double` and the GMP spot checks, together at most 1; 1 when a "prime" residue
/// was confirmed by a doubly checked rerun, or there was no iteration: M2). A fault in the rest is caught only by the Jacobi
/// checks, which it passes with probability about 1/2 (docs/testing.md). None for PRP, where
/// the Gerbicz check covers every iteration.
pub fn ll_exact_coverage(kind: TestKind, checks: &CheckLog, iterations: u64) -> Option<f64> {
    if kind != TestKind::Ll {
        return None;
    }
    let count = |key: &str| checks.summary.get(key).copied().unwrap_or(0);
    if count("confirmation_reruns") > 0 || iterations == 0 {
        return Some(1.0);
    }
    let exact = count("double_iterations").saturating_add(count("spot_iterations"));
    Some((exact as f64 / iterations.max(1) as f64).min(1.0))
}

/// What an LL result's coverage means, for the line on stderr: None when every iteration was
/// recomputed exactly.
pub fn ll_coverage_note(coverage: Option<f64>) -> Option<String> {
    let c = coverage.filter(|&c| c < 1.0)?;
    Some(format!(
        "exact checks recomputed {:.1}% of the LL iterations; the rest had only Jacobi checks, which a fault passes \
         with probability ~1/2: for a first-time test use --prp (Gerbicz-checked) or --ll-check double",
        100.0 * c
    ))
}

/// The one-line JSON result in the shape prime95 and PRPLL write and PrimeNet accepts (keys,
/// order and spellings as theirs; docs/gimps.md), then our own details under `mersenne-cert`
/// (iterations, engine, the transform's arithmetic as `arith` beside `fft-length`'s length, start
/// time, every check counter, the certificate's blake3). It carries no local file path: the line
/// goes to the server verbatim.
pub fn result_line(info: &TestInfo, rec: &RunRecord, outcome: &Outcome, ctx: &LineContext) -> Value {
    let mut v = json!({
        "exponent": info.p,
        "worktype": info.kind.worktype(),
        "status": outcome.status,
        "res64": outcome.res64,
        "res2048": outcome.res2048,
    });
    let m = v.as_object_mut().expect("json! object");
    if let Some(t) = outcome.residue_type {
        m.insert("residue-type".into(), json!(t));
    }
    m.insert("shift-count".into(), json!(info.shift));
    if let Some(n) = fft_length(info.fft_length, info.p) {
        m.insert("fft-length".into(), json!(n));
    }
    let (errors, code) = gimps_errors(info.kind, &rec.checks);
    m.insert("errors".into(), errors);
    m.insert("error-code".into(), json!(code));
    if let Some(p) = ctx.proof_file {
        // As GIMPS programs report a proof: file version, power, challenge bits, MD5 of the file.
        m.insert(
            "proof".into(),
            json!({"version": FILE_VERSION, "power": p.power(), "hashsize": HASH_BITS, "md5": p.md5_hex()}),
        );
    }
    m.insert(
        "program".into(),
        json!({
            "name": PROGRAM_NAME,
            "version": PROGRAM_VERSION,
            "os": {"os": os_name(), "architecture": std::env::consts::ARCH},
        }),
    );
    m.insert("timestamp".into(), json!(gimps_timestamp(&info.finished)));
    for (key, value) in [("aid", ctx.aid), ("user", ctx.user), ("computer", ctx.computer)] {
        if let Some(value) = value {
            m.insert(key.into(), json!(value));
        }
    }
    let mut ours = json!({
        "iterations": rec.iterations,
        "engine": info.engine,
        "started": info.started,
        "checks": rec.checks.summary,
    });
    if let Some(a) = info.arith {
        ours["arith"] = json!(a.name());
    }
    if let Some(c) = ll_exact_coverage(info.kind, &rec.checks, rec.iterations) {
        ours["ll-exact-coverage"] = json!((c * 1e4).round() / 1e4);
    }
    if let Some(hash) = ctx.certificate {
        ours["certificate"] = json!({ "blake3": hash });
    }
    m.insert(PROGRAM_NAME.into(), ours);
    v
}

/// The operating system as prime95 names it in result lines ("Linux", "Windows", "Darwin").
fn os_name() -> &'static str {
    match std::env::consts::OS {
        "linux" => "Linux",
        "windows" => "Windows",
        "macos" => "Darwin",
        "freebsd" => "FreeBSD",
        other => other,
    }
}

/// An RFC 3339 UTC time (`2026-11-22T02:36:34Z`) as GIMPS lines write it: `2026-11-22 02:36:34`.
fn gimps_timestamp(rfc3339: &str) -> String {
    match rfc3339.get(..19) {
        Some(t) if rfc3339.len() >= 20 && t.as_bytes()[10] == b'T' => t.replacen('T', " ", 1),
        _ => rfc3339.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(counts: &[(&str, u64)]) -> CheckLog {
        let mut c = CheckLog::default();
        for (k, v) in counts {
            c.bump(k, *v);
        }
        c
    }

    #[test]
    fn errors_count_what_the_checks_found_and_recovered_in_prime95s_layout() {
        let c = log(&[("gerbicz_checks", 40), ("gerbicz_failures", 2), ("spot_checks", 9), ("jacobi_failures", 5)]);
        assert_eq!(gimps_errors(TestKind::Prp, &c), (json!({"gerbicz": 2}), "00200050".into()));
        assert_eq!(gimps_errors(TestKind::Ll, &c), (json!({"Jacobi": 5}), "00200050".into()));
        // M9689 LL with two double-check failures (issue 36): counted, in bits 20-23.
        let c = log(&[("double_failures", 2), ("rollbacks", 2)]);
        assert_eq!(gimps_errors(TestKind::Ll, &c), (json!({"Jacobi": 0, "double-check": 2}), "00200000".into()));
        // Saturating at 15 in each field; spot failures are named when there are some.
        let c = log(&[("spot_failures", 3), ("gerbicz_failures", 0x1_0000), ("jacobi_failures", 99)]);
        assert_eq!(gimps_errors(TestKind::Prp, &c), (json!({"gerbicz": 0x1_0000, "spot": 3}), "00F000F0".into()));
        assert_eq!(gimps_errors(TestKind::Ll, &CheckLog::default()), (json!({"Jacobi": 0}), "00000000".into()));
    }

    #[test]
    fn the_ll_coverage_counts_exact_checks_only() {
        let c = log(&[("jacobi_checks", 2000), ("spot_iterations", 41)]);
        assert_eq!(ll_exact_coverage(TestKind::Ll, &c, 1000), Some(0.041));
        let note = ll_coverage_note(Some(0.041)).unwrap();
        assert!(note.contains("4.1% of the LL iterations") && note.contains("--ll-check double"), "{note}");
        let c = log(&[("double_iterations", 1000), ("spot_iterations", 5)]);
        assert_eq!(ll_exact_coverage(TestKind::Ll, &c, 1000), Some(1.0));
        assert_eq!(ll_coverage_note(Some(1.0)), None);
        let c = log(&[("confirmation_reruns", 1)]);
        assert_eq!(ll_exact_coverage(TestKind::Ll, &c, 1000), Some(1.0));
        assert_eq!(ll_exact_coverage(TestKind::Ll, &CheckLog::default(), 1000), Some(0.0));
        assert_eq!(ll_exact_coverage(TestKind::Prp, &c, 1000), None);
    }

    #[test]
    fn timestamps_and_lengths_in_gimps_form() {
        assert_eq!(gimps_timestamp("2026-11-22T02:36:34Z"), "2026-11-22 02:36:34");
        assert_eq!(fft_length(Some(4096), 9689), Some(4096));
        let plan = crate::transform::plan::Plan::new(9689).unwrap().n();
        assert_eq!(fft_length(None, 9689), Some(plan));
    }
}
