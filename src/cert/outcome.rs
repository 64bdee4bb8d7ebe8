//! The result a certificate states: status, res64, res2048 and the PRP residue type, derived
//! from the final residue exactly as GIMPS programs report it ([`Outcome::from_final`]).

use super::CertError;
use crate::exponent::TestKind;
use crate::residue::Residue;
use serde::{Deserialize, Serialize};

/// A result's status, written as GIMPS writes it: "P", "C" or "partial".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    /// Prime (LL) or probable prime (PRP).
    #[serde(rename = "P")]
    Prime,
    #[serde(rename = "C")]
    Composite,
    /// Fewer than the full iterations were run.
    #[serde(rename = "partial")]
    Partial,
}

impl Status {
    /// "P" or "C" from whether the test said prime.
    pub fn from_prime(prime: bool) -> Status {
        if prime {
            Status::Prime
        } else {
            Status::Composite
        }
    }

    /// As GIMPS writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Prime => "P",
            Status::Composite => "C",
            Status::Partial => "partial",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The result, as GIMPS reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outcome {
    pub status: Status,
    /// Lowest 64 bits of the reported residue, 16 upper-case hex digits.
    pub res64: String,
    /// Lowest 2048 bits of the reported residue, 512 upper-case hex digits.
    pub res2048: String,
    /// PRP residue type (prime95 numbering, 1 or 3); absent for LL and for partial runs.
    pub residue_type: Option<u8>,
}

impl Outcome {
    /// The outcome of a run of `kind` on M_p that ended after `iterations` squarings in `last`
    /// (unshifted). A full LL test reports s_{p−2}: "P" iff it is 0. A full PRP test reports
    /// the type-1 residue 3^(M_p−1) = x_p/9: "P" iff it is 1. A partial run (fewer iterations)
    /// reports the state itself with status "partial" and no residue type.
    pub fn from_final(kind: TestKind, iterations: u64, last: &Residue) -> Result<Outcome, CertError> {
        let p = last.exponent();
        if iterations < kind.full_iterations(p) {
            return Ok(Outcome {
                status: Status::Partial,
                res64: last.res64_hex(),
                res2048: last.res2048_hex(),
                residue_type: None,
            });
        }
        let (prime, reported, residue_type) = match kind {
            // M_2 = 3 is prime; the recurrence only proves odd exponents.
            TestKind::Ll => (p == 2 || last.is_zero(), last.clone(), None),
            TestKind::Prp => {
                let r = last
                    .divide_by_9()
                    .ok_or_else(|| CertError::invalid("exponent", "PRP base 3 needs p odd (3 divides M_2)"))?;
                (r.equals_u64(1), r, Some(1))
            }
        };
        Ok(Outcome {
            status: Status::from_prime(prime),
            res64: reported.res64_hex(),
            res2048: reported.res2048_hex(),
            residue_type,
        })
    }
}

impl Outcome {
    /// The result a certificate must state for a run of `kind` that ended after `iterations`
    /// squarings in `last`, in the residue type it names: [`Outcome::from_final`] for LL, partial
    /// runs and PRP type 1; for PRP type 3 x_p itself, "P" iff it is 9. Any other type is an
    /// error. The one rule of the structure check, the replay and the proof check.
    pub fn in_residue_type(
        kind: TestKind,
        iterations: u64,
        last: &Residue,
        residue_type: Option<u8>,
    ) -> Result<Outcome, CertError> {
        let partial = iterations < kind.full_iterations(last.exponent());
        match (kind, partial, residue_type) {
            (_, true, None) | (TestKind::Ll, false, None) | (TestKind::Prp, false, Some(1)) => {
                Outcome::from_final(kind, iterations, last)
            }
            (TestKind::Prp, false, Some(3)) => Ok(Outcome {
                status: Status::from_prime(last.equals_u64(9)),
                res64: last.res64_hex(),
                res2048: last.res2048_hex(),
                residue_type: Some(3),
            }),
            (_, _, t) => {
                let want = if partial || kind == TestKind::Ll { "absent" } else { "1 or 3" };
                Err(CertError::invalid("result.residue_type", format!("{t:?}: must be {want} here")))
            }
        }
    }
}
