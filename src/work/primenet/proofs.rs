//! The PRP proof upload, as prime95 and AutoPrimeNet do it (facts from autoprimenet.py's
//! `upload_proof_file`): `GET <site>/proof_upload/?UserID&Exponent&FileSize&FileMD5` answers JSON
//! with `URLToUse` and `need` (`{"start": end}`, the byte range the server still wants; a file
//! already there answers `error_status` 409); each chunk of at most 7 MiB goes as a multipart POST
//! (field `Data`) to `URLToUse` with `FileMD5`, `DataOffset`, `DataSize`, `DataMD5`, answered by
//! the next `need` or `FileUploaded`. The server keeps what it has, so an interrupted upload
//! resumes where the server says.

use super::http::{Http, NetError};
use md5::{Digest, Md5};
use serde_json::Value;

/// The largest chunk sent at once (AutoPrimeNet's default).
pub const CHUNK: usize = 7 << 20;

/// The server's `need`: (first byte, last byte) still wanted.
fn need(v: &Value, size: usize) -> Result<(usize, usize), NetError> {
    let bad = || NetError::Refused(format!("proof upload: bad 'need' in {v}"));
    let (start, end) = v.get("need").and_then(Value::as_object).and_then(|m| m.iter().next()).ok_or_else(bad)?;
    let start: usize = start.parse().map_err(|_| bad())?;
    let end = end.as_u64().or_else(|| end.as_str().and_then(|s| s.parse().ok())).ok_or_else(bad)? as usize;
    if start > end || end >= size {
        return Err(bad());
    }
    Ok((start, end))
}

fn json(text: &str) -> Result<Value, NetError> {
    serde_json::from_str(text).map_err(|e| NetError::Refused(format!("proof upload: not JSON ({e}): {text:.200}")))
}

/// Upload `bytes`, the proof of M`p`, for `user` through `site` (`…/proof_upload/`). Ok once the
/// server has the whole file (also when it had it already).
pub fn upload(http: &Http, site: &str, user: &str, p: u32, bytes: &[u8]) -> Result<(), NetError> {
    let md5 = hex::encode(Md5::digest(bytes));
    let ask = [
        ("UserID", user.to_string()),
        ("Exponent", p.to_string()),
        ("FileSize", bytes.len().to_string()),
        ("FileMD5", md5.clone()),
    ];
    let answer = json(&http.get(&format!("{site}proof_upload/"), &ask)?)?;
    match answer.get("error_status").and_then(Value::as_u64) {
        Some(409) => return Ok(()),
        Some(s) => return Err(NetError::Refused(format!("proof upload: error {s}: {answer}"))),
        None => {}
    }
    let url = answer
        .get("URLToUse")
        .and_then(Value::as_str)
        .ok_or(NetError::Refused(format!("proof upload: no URLToUse in {answer}")))?;
    // AutoPrimeNet sends to the https form of the address the server names; so do we when the
    // site itself is https.
    let url = match url.strip_prefix("http:") {
        Some(rest) if site.starts_with("https:") => format!("https:{rest}"),
        _ => url.to_string(),
    };
    let (mut pos, mut end) = need(&answer, bytes.len())?;
    loop {
        let size = CHUNK.min(end - pos + 1);
        let chunk = &bytes[pos..pos + size];
        let params = [
            ("FileMD5", md5.clone()),
            ("DataOffset", pos.to_string()),
            ("DataSize", size.to_string()),
            ("DataMD5", hex::encode(Md5::digest(chunk))),
        ];
        let answer = json(&http.post_part(&url, &params, "Data", chunk)?)?;
        if let Some(s) = answer.get("error_status") {
            return Err(NetError::Refused(format!("proof upload: error {s}: {answer}")));
        }
        if answer.get("FileUploaded").is_some() {
            return Ok(());
        }
        let (next, next_end) = need(&answer, bytes.len())?;
        if next <= pos {
            return Err(NetError::Refused(format!("proof upload: the server's need did not advance: {answer}")));
        }
        (pos, end) = (next, next_end);
    }
}
