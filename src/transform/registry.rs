//! The one registry: [`get`] maps an arithmetic's key ([`Arith`]) to its implementation
//! ([`Arithmetic`]: `goldilocks/`, `m61m31/`, `fp64/`), and the key's own methods ([`Arith::ALL`],
//! [`Arith::name`], [`Arith::from_name`], [`Arith::lengths`]) ask it. Adding
//! an arithmetic is its modules (transform/, gpu/, kernels/), its key and one line here.

use crate::transform::arith::{Arith, Length};
use crate::transform::arithmetic::Arithmetic;
use crate::transform::fp64::Fp64Arith;
use crate::transform::goldilocks::Goldilocks;
use crate::transform::m61m31::M61M31;

/// The implementation of arithmetic `id`.
pub fn get(id: Arith) -> &'static dyn Arithmetic {
    match id {
        Arith::Goldilocks => &Goldilocks,
        Arith::M61M31 => &M61M31,
        Arith::Fp64 => &Fp64Arith,
    }
}

impl Arith {
    /// Every arithmetic, in the order the names list them.
    pub const ALL: [Arith; 3] = [Arith::Goldilocks, Arith::M61M31, Arith::Fp64];

    /// The name in `--arith`, result lines and certificates.
    pub fn name(self) -> &'static str {
        get(self).name()
    }

    /// The arithmetic of a name ([`Arith::name`]), None for any other text.
    pub fn from_name(name: &str) -> Option<Arith> {
        Arith::ALL.into_iter().find(|a| a.name() == name)
    }

    /// The lengths this arithmetic plans, shortest first (n ≤ 2^MAX_LOG2).
    pub fn lengths(self) -> Vec<Length> {
        get(self).lengths()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exponent::TestKind;
    use crate::residue::{Residue, Shift};
    use crate::transform::arith::MAX_LOG2;
    use crate::transform::m61m31::stages::M61M31Tables;
    use crate::transform::plan::Plan;
    use crate::transform::twin::{self, Convolution};

    #[test]
    fn every_key_maps_to_its_own_arithmetic_and_twin() {
        for id in Arith::ALL {
            assert_eq!(get(id).id(), id);
            assert_eq!(Arith::from_name(id.name()), Some(id));
        }
        assert_eq!(Arith::ALL.map(Arith::name), ["goldilocks", "m61m31", "fp64"]);
        assert_eq!(Arith::from_name("fp32"), None);
        // Each twin is its arithmetic's own stage functions, on its own tables.
        let (p, kind) = (9_689, TestKind::Ll);
        let gl = Plan::for_arith(p, Arith::Goldilocks).unwrap();
        let mm = Plan::for_arith(p, Arith::M61M31).unwrap();
        let (d, shift) = (gl.residue_to_digits(&Residue::from_u64(p, 4), 5), Shift::new(p, 5));
        let twin = get(Arith::Goldilocks).twin(&gl).unwrap();
        assert_eq!(twin.iterate(&gl, kind, d.clone(), shift, 3), twin::iterate_digits(&gl, kind, d, shift, 3));
        assert_eq!(twin.transform_name(&gl), format!("NTT n={}", gl.n()));
        let d = mm.residue_to_digits(&Residue::from_u64(p, 4), 5);
        let (twin, tables) = (get(Arith::M61M31).twin(&mm).unwrap(), M61M31Tables::new(&mm).unwrap());
        let want = tables.iterate_digits(&mm, kind, d.clone(), shift, 3);
        assert_eq!(twin.iterate(&mm, kind, d, shift, 3), want);
        assert_eq!(twin.transform_name(&mm), format!("m61m31 n={}", mm.length()));
    }

    #[test]
    fn lengths_are_the_supported_ones_shortest_first() {
        let candidates: Vec<Length> =
            [1, 3, 5].into_iter().flat_map(|odd| (0..=MAX_LOG2 + 1).map(move |log2| Length { odd, log2 })).collect();
        for id in Arith::ALL {
            let a = get(id);
            let mut want: Vec<Length> = candidates.iter().copied().filter(|&l| a.supports(l)).collect();
            want.sort_by_key(|l| l.n());
            assert_eq!(a.lengths(), want, "{}", a.name());
            assert!(want.iter().all(|l| l.log2 >= 1 && l.n() <= 1 << MAX_LOG2));
        }
        assert_eq!(Arith::Goldilocks.lengths().len(), 26);
        assert_eq!(Arith::M61M31.lengths().len(), 26 + 24);
        assert_eq!(Arith::Fp64.lengths().len(), 22);
    }
}
