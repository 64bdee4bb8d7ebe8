//! The replay-points sidecar (`CERT.points`): full residues at checkpoints the certificate holds
//! only hashes of, so that a verifier can cut the replay into many independent segments while
//! the certificate itself stays small. The sidecar names its certificate by the blake3 hash of
//! the certificate file, and every residue in it must hash to the certificate's checkpoint hash
//! at its iteration: a sidecar can add starting points, never change what is checked. Unsigned
//! (the certificate's hashes vouch for its content). Format in `docs/verify.md`.

use super::{check_canonical, decode_exact, encode, CertBody, CertError};
use crate::residue::Residue;
use serde::{Deserialize, Serialize};
use serde_bytes::ByteBuf;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Format tag of a replay-points file.
pub const POINTS_FORMAT: &str = "mersenne-cert-points";
/// Version this program writes and reads.
pub const POINTS_VERSION: u64 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PointsFile {
    format: String,
    version: u64,
    /// blake3 of the certificate file, 64 lower-case hex digits ([`super::certificate_hash`]).
    certificate: String,
    exponent: u32,
    points: Vec<Point>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Point {
    iteration: u64,
    residue: ByteBuf,
}

/// Where the sidecar of certificate `cert` lies: the same path with ".points" appended.
pub fn sidecar_path(cert: &Path) -> PathBuf {
    let mut s = cert.as_os_str().to_owned();
    s.push(".points");
    PathBuf::from(s)
}

/// The sidecar bytes for the certificate with hash `certificate` (of M_p), holding `points`
/// (iteration, canonical residue bytes) in increasing order of iteration.
pub fn encode_points(certificate: &str, p: u32, points: Vec<(u64, ByteBuf)>) -> Vec<u8> {
    encode(&PointsFile {
        format: POINTS_FORMAT.into(),
        version: POINTS_VERSION,
        certificate: certificate.into(),
        exponent: p,
        points: points.into_iter().map(|(iteration, residue)| Point { iteration, residue }).collect(),
    })
}

/// The largest sidecar the certificate `body` can have: one residue per checkpoint, each with
/// its CBOR framing (below 64 bytes), and the header. A longer file is refused unread.
pub fn max_points_bytes(body: &CertBody) -> u64 {
    let per_point = crate::residue::byte_count(body.exponent) as u64 + 64;
    (body.checkpoints.len() as u64 + 1) * per_point + 4096
}

/// Read a sidecar for the certificate `body` whose file hashes to `certificate`: the residues by
/// iteration, each checked against the certificate's checkpoint hash there.
pub fn open_points(bytes: &[u8], certificate: &str, body: &CertBody) -> Result<BTreeMap<u64, Residue>, CertError> {
    let f: PointsFile = decode_exact(bytes, "replay-points file")?;
    check_canonical(&f, bytes, "replay-points file")?;
    let invalid = |field: String, why: String| CertError::Invalid { field, why };
    if f.format != POINTS_FORMAT {
        return Err(invalid("points.format".into(), format!("{:?} is not {POINTS_FORMAT:?}", f.format)));
    }
    if f.version != POINTS_VERSION {
        return Err(invalid("points.version".into(), format!("{} (this program reads {POINTS_VERSION})", f.version)));
    }
    if f.certificate != certificate {
        return Err(invalid(
            "points.certificate".into(),
            format!("the points belong to certificate {}, not to this one ({certificate})", f.certificate),
        ));
    }
    if f.exponent != body.exponent {
        return Err(invalid(
            "points.exponent".into(),
            format!("{} is not the certificate's {}", f.exponent, body.exponent),
        ));
    }
    let hashes: BTreeMap<u64, [u8; 32]> = body.checkpoints.iter().map(|c| (c.iteration, c.hash)).collect();
    let mut out = BTreeMap::new();
    let mut previous = 0;
    for (i, pt) in f.points.iter().enumerate() {
        let field = || format!("points[{i}] (iteration {})", pt.iteration);
        if pt.iteration <= previous {
            return Err(invalid(field(), "iterations must increase strictly".into()));
        }
        previous = pt.iteration;
        let Some(hash) = hashes.get(&pt.iteration) else {
            return Err(invalid(field(), "the certificate has no checkpoint there".into()));
        };
        let r = Residue::from_bytes(body.exponent, &pt.residue).map_err(|e| invalid(field(), e.to_string()))?;
        if r.hash() != *hash {
            return Err(invalid(field(), "residue does not match the certificate's checkpoint hash".into()));
        }
        out.insert(pt.iteration, r);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cert::samples::{sample, states};
    use crate::exponent::TestKind;

    fn points_of(body: &CertBody, at: &[u64]) -> Vec<(u64, ByteBuf)> {
        let s = states(body.kind, body.exponent, at);
        at.iter().zip(s).map(|(&k, r)| (k, ByteBuf::from(r.to_bytes()))).collect()
    }

    #[test]
    fn round_trip_and_every_rejection() {
        let body = sample(TestKind::Ll, 127, 125, 5);
        let good = encode_points("ab", 127, points_of(&body, &[10, 55]));
        let got = open_points(&good, "ab", &body).unwrap();
        assert_eq!(got.keys().copied().collect::<Vec<_>>(), vec![10, 55]);
        assert_eq!(got[&55].hash(), body.checkpoints.iter().find(|c| c.iteration == 55).unwrap().hash);

        let err = |bytes: &[u8]| open_points(bytes, "ab", &body).unwrap_err().to_string();
        assert!(err(&good[..good.len() - 1]).contains("truncated"));
        assert!(open_points(&good, "cd", &body).unwrap_err().to_string().contains("belong to certificate ab"));
        assert!(err(&encode_points("ab", 89, vec![])).contains("points.exponent"));
        assert!(err(&encode_points("ab", 127, points_of(&body, &[55, 10]))).contains("increase strictly"));
        assert!(err(&encode_points("ab", 127, points_of(&body, &[11]))).contains("no checkpoint there"));
        let mut wrong = points_of(&body, &[10]);
        wrong[0].0 = 15; // a checkpoint, but the residue is that of iteration 10
        assert!(err(&encode_points("ab", 127, wrong)).contains("does not match the certificate's checkpoint hash"));
        let mut short = points_of(&body, &[20]);
        short[0].1.pop();
        assert!(err(&encode_points("ab", 127, short)).contains("points[0] (iteration 20)"));
    }

    #[test]
    fn sidecar_is_named_after_the_certificate() {
        assert_eq!(sidecar_path(Path::new("/a/M127.cert")), PathBuf::from("/a/M127.cert.points"));
    }
}
