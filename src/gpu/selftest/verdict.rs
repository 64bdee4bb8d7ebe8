//! What every kernel check reports ([`KernelVerdict`]) and the device words it compares:
//! shared by `check` and the checks it runs (`m61m31`, `small`), below all of them.

use crate::transform::goldilocks::Gl;

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
