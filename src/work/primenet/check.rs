//! The check a result line passes before it is sent: nothing that `verify` would reject goes to
//! PrimeNet. The certificate the line names (by blake3, in `cert/`) must open (signature, the
//! body's own structure), state what the line states (exponent, work type, a full test, status,
//! res64, res2048, residue type), and its stated result must follow from its final residue; for
//! a PRP test with a proof, the proof file the line names (by MD5, in `proof/`) must be the
//! certificate's proof, and the proof must verify (about p/2^power squarings: a fraction of a
//! percent of the test, on the work loop's engine: under `--engine auto` the GPU where it
//! finishes first). An LL certificate is not replayed here (that is the test again).

use crate::cert;
use crate::decide::Ask;
use crate::verify::{proof::check_certificate, replay::check_result};
use md5::{Digest, Md5};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The file of M`p` in `dir` (its name starts `<p>-`, as certificates and proofs are named)
/// whose `hash` of its bytes is `want` (None when there is none).
fn find_by(dir: &Path, p: u64, want: &str, hash: impl Fn(&[u8]) -> String) -> Option<(PathBuf, Vec<u8>)> {
    let entries = std::fs::read_dir(dir).ok()?;
    let prefix = format!("{p}-");
    let ours = |e: &std::fs::DirEntry| e.file_name().to_str().is_some_and(|n| n.starts_with(&prefix));
    entries.filter_map(Result::ok).filter(ours).map(|e| e.path()).filter(|p| p.is_file()).find_map(|p| {
        let bytes = std::fs::read(&p).ok()?;
        (hash(&bytes) == want).then_some((p, bytes))
    })
}

/// The proof file in `proof_dir` that `line` names, by its MD5.
pub fn proof_file(proof_dir: &Path, line: &Value) -> Option<(PathBuf, Vec<u8>)> {
    let md5 = line.get("proof")?.get("md5")?.as_str()?;
    find_by(proof_dir, line.get("exponent")?.as_u64()?, md5, |b| hex::encode(Md5::digest(b)))
}

/// Check `line` against its certificate in `cert_dir` (and proof in `proof_dir`, verified on the
/// engine `ask` decides: the work loop's); the reason when it must not be sent.
pub fn check_line(cert_dir: &Path, proof_dir: &Path, line: &Value, ask: &Ask) -> Result<(), String> {
    let id = super::outbox::line_id(line).ok_or("the line names no certificate")?;
    let p = line["exponent"].as_u64().unwrap_or(0);
    let (path, bytes) = find_by(cert_dir, p, id, cert::certificate_hash)
        .ok_or(format!("no certificate with blake3 {id} in {}", cert_dir.display()))?;
    let (body, _key) = cert::open(&bytes, None).map_err(|e| format!("{}: {e}", path.display()))?;
    let s = |k: &str| line.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    let r = &body.result;
    let stated = [
        ("exponent", p.to_string(), body.exponent.to_string()),
        ("worktype", s("worktype"), body.kind.worktype().to_string()),
        ("iterations", body.kind.full_iterations(body.exponent).to_string(), body.iterations.to_string()),
        ("status", s("status"), r.status.as_str().to_string()),
        ("res64", s("res64"), r.res64.clone()),
        ("res2048", s("res2048"), r.res2048.clone()),
        (
            "residue-type",
            line.get("residue-type").map(Value::to_string).unwrap_or_default(),
            r.residue_type.map(|t| t.to_string()).unwrap_or_default(),
        ),
    ];
    for (field, in_line, in_cert) in stated {
        if in_line != in_cert {
            return Err(format!("{field} {in_line} in the line, {in_cert} in {}", path.display()));
        }
    }
    check_result(&body).map_err(|e| format!("{}: {e}", path.display()))?;
    if line.get("proof").is_some() {
        let (proof_path, proof_bytes) =
            proof_file(proof_dir, line).ok_or("the proof file the line names is missing")?;
        if body.proof.as_deref().map(|b| b.as_slice()) != Some(&proof_bytes[..]) {
            return Err(format!("{} is not the proof in {}", proof_path.display(), path.display()));
        }
        check_certificate(&body, ask).map_err(|e| format!("{}: proof: {e}", path.display()))?;
    }
    Ok(())
}
