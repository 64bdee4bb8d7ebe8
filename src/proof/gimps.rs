//! The GIMPS "PRP PROOF" VERSION=2 file, as gpuowl/PRPLL and prime95 write it:
//!
//! ```text
//! PRP PROOF\nVERSION=2\nHASHSIZE=64\nPOWER=<K>\nNUMBER=M<p>\n
//! ```
//!
//! then B and the K middles, each ⌈p/8⌉ bytes little-endian. Parsing is strict: exactly this
//! header (decimal numbers without sign or leading zeros), an odd prime p, a power usable for p,
//! exactly K+1 residues with nothing after them, every residue canonical (< M_p).

use super::{Proof, ProofError};
use crate::exponent::validate_exponent;
use crate::residue::{byte_count, Residue, ResidueError};
use std::path::Path;
use thiserror::Error;

/// Why bytes are not a well-formed GIMPS proof file (p and power problems are
/// [`super::pietrzak::ScheduleError`]s).
#[derive(Debug, Error, PartialEq, Eq)]
pub enum FormatError {
    #[error("not a GIMPS PRP proof: expected header line '{expected}'")]
    BadHeader { expected: &'static str },
    #[error("unsupported proof VERSION={0} (only VERSION=2 is supported)")]
    UnsupportedVersion(String),
    #[error("unsupported HASHSIZE={0} (only 64 is supported)")]
    UnsupportedHashSize(String),
    #[error("bad POWER={0}")]
    BadPower(String),
    #[error("NUMBER={0} is not a Mersenne number M<p> (cofactor proofs are not supported)")]
    BadNumber(String),
    #[error("proof for p={p}, power={power} needs {expected} bytes of residues, only {got} present")]
    Truncated { p: u32, power: u32, expected: usize, got: usize },
    #[error("{extra} trailing bytes after the last residue")]
    TrailingBytes { extra: usize },
    #[error("{which}: {source}")]
    BadResidue { which: String, source: ResidueError },
}

const MAX_LINE: usize = 32;

/// The file name gpuowl/PRPLL gives a proof: `<p>-<power>.proof`.
pub fn file_name(proof: &Proof) -> String {
    format!("{}-{}.proof", proof.p(), proof.power())
}

/// The file bytes of a proof.
pub fn encode(proof: &Proof) -> Vec<u8> {
    let header = format!("PRP PROOF\nVERSION=2\nHASHSIZE=64\nPOWER={}\nNUMBER=M{}\n", proof.power(), proof.p());
    let mut out = Vec::with_capacity(header.len() + (proof.middles().len() + 1) * byte_count(proof.p()));
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&proof.b().to_bytes());
    for m in proof.middles() {
        out.extend_from_slice(&m.to_bytes());
    }
    out
}

/// Split off one '\n'-terminated line starting with `prefix`; return the rest of that line.
fn field<'a>(rest: &mut &'a [u8], prefix: &'static str, expected: &'static str) -> Result<&'a str, FormatError> {
    let bad = || FormatError::BadHeader { expected };
    let end = rest.iter().take(MAX_LINE).position(|&c| c == b'\n').ok_or_else(bad)?;
    let line = std::str::from_utf8(&rest[..end]).map_err(|_| bad())?;
    let value = line.strip_prefix(prefix).ok_or_else(bad)?;
    *rest = &rest[end + 1..];
    Ok(value)
}

/// A decimal number as GIMPS programs print it: digits only, no leading zero, fits in u64.
fn decimal(s: &str) -> Option<u64> {
    let ok =
        !s.is_empty() && s.len() <= 19 && s.bytes().all(|c| c.is_ascii_digit()) && (s == "0" || !s.starts_with('0'));
    if ok {
        s.parse().ok()
    } else {
        None
    }
}

/// Parse file bytes into a [`Proof`]; see the module doc for what is accepted.
pub fn decode(bytes: &[u8]) -> Result<Proof, ProofError> {
    let mut rest = bytes;
    let magic = field(&mut rest, "PRP PROOF", "PRP PROOF")?;
    if !magic.is_empty() {
        return Err(FormatError::BadHeader { expected: "PRP PROOF" }.into());
    }
    let version = field(&mut rest, "VERSION=", "VERSION=2")?;
    if version != "2" {
        return Err(FormatError::UnsupportedVersion(version.to_string()).into());
    }
    let hashsize = field(&mut rest, "HASHSIZE=", "HASHSIZE=64")?;
    if hashsize != "64" {
        return Err(FormatError::UnsupportedHashSize(hashsize.to_string()).into());
    }
    let power_text = field(&mut rest, "POWER=", "POWER=<K>")?;
    let power = decimal(power_text)
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| FormatError::BadPower(power_text.to_string()))?;
    let number = field(&mut rest, "NUMBER=", "NUMBER=M<p>")?;
    let p_value =
        number.strip_prefix('M').and_then(decimal).ok_or_else(|| FormatError::BadNumber(number.to_string()))?;
    let p = validate_exponent(p_value).map_err(super::pietrzak::ScheduleError::from)?;
    super::pietrzak::check_params(p, power)?;

    let n = byte_count(p);
    let expected = n * (power as usize + 1);
    if rest.len() < expected {
        return Err(FormatError::Truncated { p, power, expected, got: rest.len() }.into());
    }
    if rest.len() > expected {
        return Err(FormatError::TrailingBytes { extra: rest.len() - expected }.into());
    }
    let mut residues = rest.chunks_exact(n).enumerate().map(|(i, chunk)| {
        Residue::from_bytes(p, chunk).map_err(|source| {
            let which = if i == 0 { "B".to_string() } else { format!("middle {}", i - 1) };
            FormatError::BadResidue { which, source }
        })
    });
    let b = residues.next().expect("power + 1 >= 2 residues")?;
    let middles = residues.collect::<Result<Vec<_>, _>>()?;
    Proof::new(b, middles)
}

/// Read and parse a proof file.
pub fn read_file(path: &Path) -> Result<Proof, ProofError> {
    let bytes = std::fs::read(path).map_err(|source| ProofError::Io { path: path.to_path_buf(), source })?;
    decode(&bytes)
}

/// Write a proof file atomically (temporary file, fsync, rename, fsync of the directory).
pub fn write_file(proof: &Proof, path: &Path) -> Result<(), ProofError> {
    crate::fsutil::write_atomic(path, &encode(proof), 0o644)
        .map_err(|source| ProofError::Io { path: path.to_path_buf(), source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exponent::ExponentError;
    use crate::proof::pietrzak::ScheduleError;

    fn sample(p: u32, power: u32) -> Proof {
        let b = Residue::from_u64(p, 9);
        let middles = (0..power).map(|i| Residue::from_u64(p, 1000 + i as u64)).collect();
        Proof::new(b, middles).unwrap()
    }

    fn with_header(h: &str, p: u32, count: usize) -> Vec<u8> {
        let mut v = h.as_bytes().to_vec();
        v.resize(h.len() + count * byte_count(p), 0);
        v[h.len()] = 9;
        v
    }

    #[test]
    fn round_trip_and_name() {
        let pr = sample(9689, 5);
        let bytes = pr.to_gimps_bytes();
        assert!(bytes.starts_with(b"PRP PROOF\nVERSION=2\nHASHSIZE=64\nPOWER=5\nNUMBER=M9689\n"));
        assert_eq!(Proof::from_gimps_bytes(&bytes).unwrap(), pr);
        assert_eq!(file_name(&pr), "9689-5.proof");
    }

    fn err(bytes: &[u8]) -> ProofError {
        Proof::from_gimps_bytes(bytes).unwrap_err()
    }

    #[test]
    fn header_errors() {
        let ok = "PRP PROOF\nVERSION=2\nHASHSIZE=64\nPOWER=2\nNUMBER=M31\n";
        assert!(Proof::from_gimps_bytes(&with_header(ok, 31, 3)).is_ok());
        type Check = fn(&ProofError) -> bool;
        let cases: &[(&str, Check)] = &[
            ("PRP PROOF \nVERSION=2\nHASHSIZE=64\nPOWER=2\nNUMBER=M31\n", |e| {
                matches!(e, ProofError::Format(FormatError::BadHeader { .. }))
            }),
            ("PRP PROOF\nVERSION=1\nHASHSIZE=64\nPOWER=2\nNUMBER=M31\n", |e| {
                matches!(e, ProofError::Format(FormatError::UnsupportedVersion(_)))
            }),
            ("PRP PROOF\nVERSION=2\nHASHSIZE=32\nPOWER=2\nNUMBER=M31\n", |e| {
                matches!(e, ProofError::Format(FormatError::UnsupportedHashSize(_)))
            }),
            ("PRP PROOF\nVERSION=2\nHASHSIZE=64\nPOWER=02\nNUMBER=M31\n", |e| {
                matches!(e, ProofError::Format(FormatError::BadPower(_)))
            }),
            ("PRP PROOF\nVERSION=2\nHASHSIZE=64\nPOWER=+2\nNUMBER=M31\n", |e| {
                matches!(e, ProofError::Format(FormatError::BadPower(_)))
            }),
            ("PRP PROOF\nVERSION=2\nHASHSIZE=64\nPOWER=2\nNUMBER=M031\n", |e| {
                matches!(e, ProofError::Format(FormatError::BadNumber(_)))
            }),
            ("PRP PROOF\nVERSION=2\nHASHSIZE=64\nPOWER=2\nNUMBER=M31/7\n", |e| {
                matches!(e, ProofError::Format(FormatError::BadNumber(_)))
            }),
            ("PRP PROOF\nVERSION=2\nHASHSIZE=64\nPOWER=2\nNUMBER=2^31-1\n", |e| {
                matches!(e, ProofError::Format(FormatError::BadNumber(_)))
            }),
            ("PRP PROOF\nVERSION=2\nHASHSIZE=64\nPOWER=2\nNUMBER=M33\n", |e| {
                matches!(e, ProofError::Schedule(ScheduleError::Exponent(ExponentError::NotPrime(33))))
            }),
            ("PRP PROOF\nVERSION=2\nHASHSIZE=64\nPOWER=2\nNUMBER=M2\n", |e| {
                matches!(e, ProofError::Schedule(ScheduleError::EvenExponent(2)))
            }),
            ("PRP PROOF\nVERSION=2\nHASHSIZE=64\nPOWER=0\nNUMBER=M31\n", |e| {
                matches!(e, ProofError::Schedule(ScheduleError::PowerOutOfRange { .. }))
            }),
            ("PRP PROOF\nVERSION=2\nHASHSIZE=64\nPOWER=13\nNUMBER=M31\n", |e| {
                matches!(e, ProofError::Schedule(ScheduleError::PowerOutOfRange { .. }))
            }),
            ("PRP PROOF\nVERSION=2\nHASHSIZE=64\nPOWER=99999999999999999999\nNUMBER=M31\n", |e| {
                matches!(e, ProofError::Format(FormatError::BadPower(_)))
            }),
            ("PRP PROOF\nVERSION=2\nHASHSIZE=64\nPOWER=2\nNUMBER=M1000000007\n", |e| {
                matches!(e, ProofError::Schedule(ScheduleError::Exponent(ExponentError::TooLarge(_))))
            }),
            ("PRP PROOF\r\nVERSION=2\nHASHSIZE=64\nPOWER=2\nNUMBER=M31\n", |e| {
                matches!(e, ProofError::Format(FormatError::BadHeader { .. }))
            }),
        ];
        for (h, check) in cases {
            let e = err(&with_header(h, 31, 3));
            assert!(check(&e), "{h:?} gave {e:?}");
        }
        assert!(matches!(err(b""), ProofError::Format(FormatError::BadHeader { .. })));
        assert!(matches!(err(&[0xff; 100]), ProofError::Format(FormatError::BadHeader { .. })));
    }

    #[test]
    fn size_and_residue_errors() {
        let h = "PRP PROOF\nVERSION=2\nHASHSIZE=64\nPOWER=2\nNUMBER=M31\n";
        let full = with_header(h, 31, 3);
        assert!(matches!(err(&full[..full.len() - 1]), ProofError::Format(FormatError::Truncated { .. })));
        let mut long = full.clone();
        long.push(0);
        assert!(matches!(err(&long), ProofError::Format(FormatError::TrailingBytes { extra: 1 })));
        let mut high = full.clone();
        let last = high.len() - 1;
        high[last] = 0x80; // bit 31 of the last middle
        match err(&high) {
            ProofError::Format(FormatError::BadResidue { which, .. }) => assert_eq!(which, "middle 1"),
            e => panic!("{e:?}"),
        }
        let mut all_ones = full;
        let start = h.len();
        all_ones[start..start + 4].copy_from_slice(&[0xff, 0xff, 0xff, 0x7f]); // B = M_31
        match err(&all_ones) {
            ProofError::Format(FormatError::BadResidue { which, source }) => {
                assert_eq!(which, "B");
                assert_eq!(source, ResidueError::NotCanonical { p: 31 });
            }
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn never_panics_on_junk() {
        let base = sample(61, 3).to_gimps_bytes();
        for cut in 0..base.len() {
            let _ = Proof::from_gimps_bytes(&base[..cut]);
        }
        for i in 0..base.len() {
            for v in [0u8, b'0', b'9', b'\n', 0xff] {
                let mut b = base.clone();
                b[i] = v;
                let _ = Proof::from_gimps_bytes(&b);
            }
        }
    }
}
