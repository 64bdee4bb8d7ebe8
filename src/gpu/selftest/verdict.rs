//! What every kernel check reports ([`KernelVerdict`]), the device words it compares and the
//! digits it feeds: shared by `check` and the checks it runs (`m61m31`, `fp64_stages`, `small`),
//! below all of them.

use crate::rng::SeededRng;
use crate::transform::goldilocks::Gl;
use crate::transform::plan::Plan;

/// One kernel's verdict at one length.
#[derive(Debug, Clone)]
pub struct KernelVerdict {
    pub kernel: String,
    pub ok: bool,
}

pub(in crate::gpu) fn as_words(v: &[Gl]) -> Vec<u64> {
    v.iter().map(|g| g.value()).collect()
}
pub(in crate::gpu) fn signed_words(v: &[i64]) -> Vec<u64> {
    v.iter().map(|&d| d as u64).collect()
}

/// Digits of the plan's widths at the largest magnitude the bound allows (2^(w−1) + slack) with
/// random signs, or random balanced ones.
pub(in crate::gpu) fn test_digits(plan: &Plan, rng: &mut SeededRng, extreme: bool) -> Vec<i64> {
    (0..plan.n())
        .map(|j| {
            let w = plan.width(j);
            if extreme {
                let top = (1i64 << (w - 1)) + plan.slack() as i64;
                if rng.below(2) == 0 {
                    top
                } else {
                    -top
                }
            } else {
                rng.below(1 << w) as i64 - (1 << (w - 1))
            }
        })
        .collect()
}
