//! What a test's final residue means: the GIMPS-style outcome (status, res64, res2048, residue
//! type), shared by the prover and the verifier so both derive the result the same way.

use crate::cert::Outcome;
use crate::exponent::TestKind;
use crate::residue::Residue;

/// The starting value of a test, as a residue.
pub fn start_residue(p: u32, kind: TestKind) -> Residue {
    Residue::from_u64(p, kind.start_value())
}

/// The result a final residue implies, GIMPS style. `full` says whether the run reached the
/// end of the test (otherwise the status is "partial" and res64 is that of the residue itself).
pub fn outcome(kind: TestKind, last: &Residue, full: bool) -> Outcome {
    let p = last.exponent();
    if !full {
        return Outcome { status: "partial".into(), res64: last.res64_hex(), res2048: last.res2048_hex(), residue_type: None };
    }
    match kind {
        TestKind::Ll => {
            // p = 2 is special: M_2 = 3 is prime and the test has no iterations.
            let prime = p == 2 || last.is_zero();
            Outcome { status: status(prime), res64: last.res64_hex(), res2048: last.res2048_hex(), residue_type: None }
        }
        TestKind::Prp => {
            let prime = last.equals_u64(9);
            let t1 = prp_type1(last);
            Outcome { status: status(prime), res64: t1.res64_hex(), res2048: t1.res2048_hex(), residue_type: Some(1) }
        }
    }
}

fn status(prime: bool) -> String {
    if prime { "P" } else { "C" }.into()
}

/// The type-1 PRP residue 3^(M_p − 1) = x_p / 9 from the type-3 residue x_p = 3^(M_p + 1).
pub fn prp_type1(x_p: &Residue) -> Residue {
    let p = x_p.exponent();
    let m = (rug::Integer::from(1) << p) - 1u32;
    match rug::Integer::from(9).invert(&m) {
        Ok(inv9) => Residue::from_integer(p, &(x_p.to_integer() * inv9)),
        // 9 is not invertible only for p = 2 (M_2 = 3), where every residue is 0.
        Err(_) => x_p.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type1_of_nine_is_one() {
        for p in [3u32, 5, 7, 13, 89, 127] {
            assert!(prp_type1(&Residue::from_u64(p, 9)).equals_u64(1));
        }
    }
}
