//! The plans are the numbers the kernels and the twin run on: a refactor of the transform must
//! leave them bit for bit as they were. Each case's digit widths, weights, twiddles and carry
//! parameters (the M61·M31 and FP64 tables and schedules too) hash to the FNV-1a value computed
//! before issue 38's host-side restructuring (main e28262c; FP64's when it landed, d1ac5b9); a
//! slip in any of them changes the hash.

use mersenne_cert::gpu::PassSchedule;
use mersenne_cert::transform::fp64::stages::Fp64Tables;
use mersenne_cert::transform::m61m31::stages::M61M31Tables;
use mersenne_cert::transform::plan::{Arith, Length, Plan};

/// FNV-1a over 64-bit words.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn word(&mut self, w: u64) {
        for b in w.to_le_bytes() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn words(&mut self, ws: impl IntoIterator<Item = u64>) {
        ws.into_iter().for_each(|w| self.word(w));
    }
}

/// The layout and carry parameters every plan has.
fn layout(h: &mut Fnv, plan: &Plan) {
    let (w_min, w_max) = plan.widths();
    h.words([plan.n() as u64, u64::from(w_min), u64::from(w_max), plan.fixup_depth() as u64, plan.slack()]);
    h.words([plan.seg_len() as u64, u64::from(plan.shared_log2()), u64::from(plan.is_small())]);
    h.words(plan.global_passes().into_iter().map(u64::from));
    h.words((0..plan.n()).map(|j| u64::from(plan.width(j))));
    h.words((0..plan.n()).map(|j| plan.weight_exp(j) as u64));
}

fn goldilocks(plan: &Plan) -> u64 {
    let mut h = Fnv::new();
    layout(&mut h, plan);
    h.word(u64::from(plan.lo_bits()));
    h.words((0..plan.n()).flat_map(|j| [plan.weight(j).value(), plan.inv_weight(j).value()]));
    for table in plan.weight_tables() {
        h.words(table.iter().map(|g| g.value()));
    }
    let (tw, itw) = plan.twiddles();
    h.words(tw.iter().chain(itw).map(|g| g.value()));
    h.0
}

fn m61m31(plan: &Plan) -> u64 {
    let mut h = Fnv::new();
    layout(&mut h, plan);
    let t = M61M31Tables::new(plan).unwrap();
    h.words((0..plan.n()).flat_map(|j| [t.t61.weight_shift(plan, j), t.t31.weight_shift(plan, j)]).map(u64::from));
    h.words(format!("{t:?}").bytes().map(u64::from));
    h.0
}

/// The FP64 plan's shape and both primes' tables and schedules (as the GPU takes them).
fn fp64(plan: &Plan) -> u64 {
    let mut h = Fnv::new();
    layout(&mut h, plan);
    let t = Fp64Tables::new(plan).unwrap();
    h.words([u64::from(t.log_r), u64::from(t.log_c), t.crt.inv.to_bits()]);
    for q in &t.primes {
        h.words([q.reduce_mask(), q.weight_step.narrow.to_bits(), q.weight_step.wide.to_bits()]);
        h.words([q.inv_weight_step.narrow.to_bits(), q.inv_weight_step.wide.to_bits()]);
        let none: &[f64] = &[];
        let col = q.col.as_ref().map_or([none, none], |c| [c.twiddles(), c.inv_twiddles()]);
        let tables = [q.row.twiddles(), q.row.inv_twiddles(), col[0], col[1]];
        let rows_tiles = [&q.weight, &q.inv_weight].map(|w| [w.row.as_slice(), w.tile.as_slice()]);
        let powers = [&q.twiddle, &q.inv_twiddle];
        let steps = [q.twiddle_step.as_slice(), q.inv_twiddle_step.as_slice()];
        let all = tables
            .into_iter()
            .chain(rows_tiles.into_iter().flatten())
            .chain(powers.iter().flat_map(|w| [w.hi.as_slice(), w.lo.as_slice()]))
            .chain(steps);
        all.for_each(|v| h.words(v.iter().map(|x| x.to_bits())));
    }
    h.0
}

/// p, arithmetic, length (odd, log2) or None for the smallest, hash.
type Case = (u32, Arith, Option<(u32, u32)>, u64);

/// The cases and their hashes on main e28262c.
const CASES: [Case; 19] = [
    (127, Arith::Goldilocks, None, 3382160250781228513),
    (521, Arith::Goldilocks, Some((1, 9)), 6905815734353870511),
    (23209, Arith::Goldilocks, None, 15448160875429027233),
    (204799, Arith::Goldilocks, None, 1084102270637252332),
    (1257787, Arith::Goldilocks, None, 8407141897713801540),
    (1257787, Arith::Goldilocks, Some((1, 17)), 1292119904963648185),
    (3021377, Arith::Goldilocks, None, 13490486585559091412),
    (20996011, Arith::Goldilocks, None, 5300988561973934331),
    (1001, Arith::M61M31, Some((3, 3)), 11345946178087963044),
    (9689, Arith::M61M31, None, 12076334284023632736),
    (100003, Arith::M61M31, None, 17562406685794781661),
    (100003, Arith::M61M31, Some((3, 12)), 5800484473749465917),
    (1257787, Arith::M61M31, None, 7328533967650019168),
    (3021377, Arith::M61M31, None, 14898258450489929210),
    // FP64 (issue 37) as first landed (d1ac5b9): one row, four steps, the longest length;
    // 1257787 at 2^15 and 20996011 at 2^19 since the measured row split (2^6 and 2^7 rows);
    // the narrow pair's schedules since the stages of half-size ≤ 4 skip their products by ω^0
    // (P2 reduces before more inverse steps: ntt::UNIT_HALF); a segment's first weight from a
    // row's and a tile's table entry (stages.rs RowTile) since branch next/row-tables.
    (9689, Arith::Fp64, None, 15101919040642287605),
    (1257787, Arith::Fp64, None, 9688548793268525203),
    (20996011, Arith::Fp64, Some((1, 20)), 5315287626816349908),
    (136279841, Arith::Fp64, None, 12062959731292027840),
    // The wide pair of primes (Q1·Q2) where the narrow one's bound fails: 2^19, not 2^20; rows
    // of 2^11 since the H200's split (2^8 rows at 2^19, src/transform/fp64/shape.rs). All five
    // since a segment's first twiddle is a tile's hi entry times its lo entry by the row's bits
    // (stages.rs TilePowers), not a split of the exponent's; and since the hash takes the twiddle
    // steps' tables, whose entries are centered powers (before: a product of two table entries).
    (20996011, Arith::Fp64, None, 17778182646542086285),
];

#[test]
fn plans_are_as_they_were() {
    for (p, arith, len, want) in CASES {
        let plan = match len {
            Some((odd, log2)) => Plan::with_length(p, arith, Length { odd, log2 }).unwrap(),
            None => Plan::for_arith(p, arith).unwrap(),
        };
        let got = match arith {
            Arith::Goldilocks => goldilocks(&plan),
            Arith::M61M31 => m61m31(&plan),
            Arith::Fp64 => fp64(&plan),
        };
        assert_eq!(got, want, "p={p} {arith:?} {len:?}");
    }
}

/// The carry segments and pass shapes of Goldilocks plans at every line length the tuner tries.
const RELINED: u64 = 0x5bed_380e_086a_c46a;

#[test]
fn relined_plans_are_as_they_were() {
    let mut h = Fnv::new();
    for p in [127, 23_209, 204_799, 1_257_787, 20_996_011, 82_589_933] {
        let base = Plan::new(p).unwrap();
        for k in 5..=10 {
            let plan = base.clone().with_line_stages(k).unwrap();
            h.words([plan.seg_len() as u64, u64::from(plan.shared_log2())]);
            h.words(plan.global_passes().into_iter().map(u64::from));
            h.words(plan.column_passes().into_iter().flat_map(|c| [c.stages, c.s_log, c.c_log]).map(u64::from));
        }
    }
    assert_eq!(h.0, RELINED);
}
