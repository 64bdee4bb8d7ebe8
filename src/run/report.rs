//! What a finished test reports: the certificate body assembled from a run, and the GIMPS-style
//! JSON result line printed on stdout.

use crate::cert::{CertBody, Outcome, Program};
use crate::exponent::TestKind;
use crate::proof::session::{BuiltProof, FILE_VERSION, HASH_BITS};
use crate::run::RunRecord;
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
    pub host: String,
    pub started: String,
    pub finished: String,
    /// The PRP proof of the run, when one was built.
    pub proof: Option<BuiltProof>,
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
        host: info.host.clone(),
        started: info.started.clone(),
        finished: info.finished.clone(),
        checkpoints: rec.checkpoints.clone(),
        result: outcome.clone(),
        checks: rec.checks.clone(),
        proof: info.proof.as_ref().map(|p| serde_bytes::ByteBuf::from(p.bytes.clone())),
    }
}

/// The one-line JSON result, GIMPS style (keys as prime95/PRPLL print them), plus the
/// certificate's path and blake3 when one was written.
pub fn result_line(info: &TestInfo, rec: &RunRecord, outcome: &Outcome, cert: Option<(&str, &str)>) -> Value {
    let mut v = json!({
        "exponent": info.p,
        "worktype": info.kind.worktype(),
        "status": outcome.status,
        "res64": outcome.res64,
    });
    let m = v.as_object_mut().expect("json! object");
    if let Some(t) = outcome.residue_type {
        m.insert("residue-type".into(), json!(t));
    }
    m.insert("res2048".into(), json!(outcome.res2048));
    m.insert("shift-count".into(), json!(info.shift));
    if let Some(n) = info.fft_length {
        m.insert("fft-length".into(), json!(n));
    }
    m.insert("iterations".into(), json!(rec.iterations));
    let errors: serde_json::Map<String, Value> =
        rec.checks.summary.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    m.insert("errors".into(), Value::Object(errors));
    if let Some(p) = &info.proof {
        // As GIMPS programs report a proof: file version, power, challenge bits, MD5 of the file.
        m.insert(
            "proof".into(),
            json!({"version": FILE_VERSION, "power": p.power(), "hashsize": HASH_BITS, "md5": p.md5_hex()}),
        );
    }
    m.insert("engine".into(), json!(info.engine));
    m.insert("program".into(), json!({"name": PROGRAM_NAME, "version": PROGRAM_VERSION}));
    m.insert("timestamp".into(), json!(info.finished));
    m.insert("started".into(), json!(info.started));
    if let Some((path, hash)) = cert {
        m.insert("certificate".into(), json!({"path": path, "blake3": hash}));
    }
    v
}
