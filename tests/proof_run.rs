//! The driver's proof points (library level): whatever faults and rollbacks happen on the way,
//! every point the run leaves in its store is the true x_k, so the proof it builds is the one
//! an undisturbed run builds; a run interrupted at a verified state has written no point
//! beyond it; resuming keeps the points and refuses a damaged one.

mod common;

use mersenne_cert::cpu_ref::GmpEngine;
use mersenne_cert::exponent::TestKind;
use mersenne_cert::progress::Progress;
use mersenne_cert::proof::arith::CpuArith;
use mersenne_cert::proof::points::ProofStore;
use mersenne_cert::proof::{pietrzak, prove_from_store};
use mersenne_cert::residue::Residue;
use mersenne_cert::run::checkpoints::{CheckpointLayout, DEFAULT_RESIDUE_BUDGET};
use mersenne_cert::run::state::StateStore;
use mersenne_cert::run::{self, Fault, RunEnd, RunError, RunOptions};
use std::path::Path;

const P: u32 = 4423;
const POWER: u32 = 5;

fn options(points: &ProofStore, faults: Vec<Fault>) -> RunOptions {
    let total = P as u64;
    let layout = CheckpointLayout::choose(P, total, None, DEFAULT_RESIDUE_BUDGET).unwrap();
    let mut o = RunOptions::simple(total, layout, 17);
    o.gerbicz_block = 40; // checks at 40 and then every 1600 iterations
    o.faults = faults;
    o.proof = Some(points.clone());
    o
}

fn on_disk(points: &ProofStore) -> Vec<Option<Residue>> {
    (0..points.points().len()).map(|i| points.load(i).ok()).collect()
}

#[test]
fn faults_never_leave_a_wrong_point() {
    let want = common::proof_points(P, POWER);
    let dir = tempfile::tempdir().unwrap();
    let points = ProofStore::new(&dir.path().join("pts"), P, POWER).unwrap();
    // Faults just after a point, between points, and right at one, before the checks that
    // catch them: the points read in between were wrong until the rollback recomputed them.
    let at = points.points()[7];
    let faults = vec![
        Fault { iteration: at, word: 3, bit: 5 },
        Fault { iteration: 1999, word: 0, bit: 1 },
        Fault { iteration: 4000, word: 7, bit: 60 },
    ];
    let mut e = GmpEngine::new(P, TestKind::Prp, 17);
    let RunEnd::Done(rec) = run::run(&mut e, options(&points, faults), &mut Progress::hidden()).unwrap() else {
        panic!("not interrupted")
    };
    assert!(rec.checks.summary["rollbacks"] >= 3, "{:?}", rec.checks.summary);
    assert_eq!(rec.last, want[want.len() - 1]);
    let got = on_disk(&points);
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.as_ref(), Some(w), "point {i} (iteration {})", points.points()[i]);
    }
    let proof = prove_from_store(&points, &mut CpuArith).unwrap();
    let honest = pietrzak::build(P, POWER, |i| Ok(want[i].clone()), &mut CpuArith).unwrap();
    assert_eq!(proof, honest);
}

fn interrupted_run(points: &ProofStore, state: &Path, stop_at: u64) -> u64 {
    let mut o = options(points, vec![]);
    o.store = Some(StateStore::open(state, P, TestKind::Prp).unwrap());
    o.stop_at = Some(stop_at);
    match run::run(&mut GmpEngine::new(P, TestKind::Prp, 17), o, &mut Progress::hidden()).unwrap() {
        RunEnd::Interrupted { iteration } => iteration,
        RunEnd::Done(_) => panic!("not interrupted"),
    }
}

#[test]
fn interruption_and_resume() {
    let want = common::proof_points(P, POWER);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let points = ProofStore::new(&dir.path().join("pts"), P, POWER).unwrap();
    let k = interrupted_run(&points, &state, 2100);
    assert!(k >= 2100);
    let got = on_disk(&points);
    for (i, &it) in points.points().iter().enumerate() {
        match it <= k {
            true => assert_eq!(got[i].as_ref(), Some(&want[i]), "point {i}"),
            false => assert!(got[i].is_none(), "point {i} (iteration {it}) written before its check"),
        }
    }
    // Damage the first point: resuming refuses, naming it.
    let path = dir.path().join("pts").join(format!("{}.point", points.points()[0]));
    let mut b = std::fs::read(&path).unwrap();
    b[100] ^= 1;
    std::fs::write(&path, &b).unwrap();
    let mut o = options(&points, vec![]);
    o.store = Some(StateStore::open(&state, P, TestKind::Prp).unwrap());
    let e = run::run(&mut GmpEngine::new(P, TestKind::Prp, 17), o.clone(), &mut Progress::hidden()).unwrap_err();
    assert!(matches!(e, RunError::ProofResume { iteration, .. } if iteration == k), "{e}");
    // Repaired, the resumed run finishes with every point right.
    b[100] ^= 1;
    std::fs::write(&path, &b).unwrap();
    let RunEnd::Done(rec) = run::run(&mut GmpEngine::new(P, TestKind::Prp, 17), o, &mut Progress::hidden()).unwrap()
    else {
        panic!("not interrupted")
    };
    assert_eq!(rec.resumed_from, Some(k));
    assert_eq!(on_disk(&points).into_iter().map(Option::unwrap).collect::<Vec<_>>(), want);
}

#[test]
fn proofs_only_for_full_prp_runs() {
    let dir = tempfile::tempdir().unwrap();
    let points = ProofStore::new(dir.path(), P, POWER).unwrap();
    let mut o = options(&points, vec![]);
    o.total = 100;
    let e = run::run(&mut GmpEngine::new(P, TestKind::Prp, 0), o, &mut Progress::hidden()).unwrap_err();
    assert!(matches!(e, RunError::ProofNotFull { .. }), "{e}");
    let e = run::run(&mut GmpEngine::new(P, TestKind::Ll, 0), options(&points, vec![]), &mut Progress::hidden())
        .unwrap_err();
    assert!(matches!(e, RunError::ProofNotFull { .. }), "{e}");
}
