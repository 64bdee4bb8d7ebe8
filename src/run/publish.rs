//! What a finished test publishes, the same for `prove P` and a work assignment: the verdict and
//! the proof built and checked before anything is written ([`conclude`]), then the signed
//! certificate, the GIMPS proof file (written atomically and read back before any line names
//! it) and the result line ([`publish`]). Printing or appending the line, clearing the saved
//! states and the summary are the front end's.

use crate::cert::{Outcome, Status};
use crate::exponent::TestKind;
use crate::fsutil;
use crate::proof::session::BuiltProof;
use crate::proof::Proof;
use crate::run::report::{self, LineContext, TestInfo};
use crate::run::test::Test;
use crate::run::RunRecord;
use crate::trace;
use anyhow::{anyhow, bail, Context, Result};
use ed25519_dalek::SigningKey;
use serde_json::Value;
use std::path::Path;

/// "is prime", "is a probable prime", "is composite" or "partial".
pub fn verdict(status: Status, kind: TestKind) -> &'static str {
    match (status, kind) {
        (Status::Prime, TestKind::Ll) => "is prime",
        (Status::Prime, TestKind::Prp) => "is a probable prime",
        (Status::Composite, _) => "is composite",
        (Status::Partial, _) => "partial",
    }
}

/// The verdict of a finished run, and its proof built and checked. A proof that fails its check
/// is an error that says the test itself finished (its verdict and res64) and, in `next`, what
/// the user can do: nothing is published.
pub fn conclude(test: &mut Test, rec: &RunRecord, next: &str) -> Result<(Outcome, TestInfo)> {
    let outcome = test.outcome(rec)?;
    let built = test.build_proof(rec).map_err(|e| {
        anyhow!(
            "{e:#}; the proof is not published and no certificate is written. The test itself finished: M{} {} \
             (res64 {}); {next}",
            rec.last.exponent(),
            verdict(outcome.status, test.kind()),
            outcome.res64
        )
    })?;
    let info = test.info(rec, built);
    Ok((outcome, info))
}

/// Where a finished test's outputs go, and what its result line names beside the result.
#[derive(Default)]
pub struct Outputs<'a> {
    /// The certificate's path and the key that signs it, when one is written.
    pub certificate: Option<(&'a Path, &'a SigningKey)>,
    /// The GIMPS proof file, for a test with a proof, when one is written.
    pub proof_file: Option<&'a Path>,
    /// The PrimeNet assignment id, user and computer (the work loop's).
    pub aid: Option<&'a str>,
    pub user: Option<&'a str>,
    pub computer: Option<&'a str>,
}

/// The result line, and the certificate's hash when one was written.
pub struct Published {
    pub line: Value,
    pub certificate: Option<String>,
}

/// Write the certificate and the proof file `out` asks for, and make the result line: it names
/// the proof only once its file is written and read back (PrimeNet waits for that file).
pub fn publish(
    test: &Test,
    rec: &mut RunRecord,
    outcome: &Outcome,
    info: &TestInfo,
    out: &Outputs,
) -> Result<Published> {
    let certificate = match out.certificate {
        Some((path, key)) => Some(test.write_certificate(path, key, info, rec, outcome)?),
        None => None,
    };
    let proof_file = match (out.proof_file, &info.proof) {
        (Some(path), Some(b)) => {
            write_proof_file(path, b)?;
            trace::mark("gimps proof written");
            Some(b)
        }
        _ => None,
    };
    let ctx = LineContext {
        aid: out.aid,
        user: out.user,
        computer: out.computer,
        proof_file,
        certificate: certificate.as_deref(),
    };
    Ok(Published { line: report::result_line(info, rec, outcome, &ctx), certificate })
}

/// Write the GIMPS proof file atomically and read it back: its bytes must decode to the same
/// proof and have the MD5 the result line will name.
fn write_proof_file(path: &Path, b: &BuiltProof) -> Result<()> {
    fsutil::write_atomic(path, &b.bytes, 0o644)
        .with_context(|| format!("cannot write the proof file {}", path.display()))?;
    let back = std::fs::read(path).with_context(|| format!("cannot read back the proof {}", path.display()))?;
    let same = back == b.bytes && Proof::from_gimps_bytes(&back).is_ok_and(|q| q == b.proof);
    if !same {
        bail!("the proof file {} does not read back as written", path.display());
    }
    Ok(())
}
