//! Reading a run's proof points ahead of their use. Building a proof asks for its 2^K points in a
//! fixed order ([`pietrzak::load_order`]), one per tree leaf; on a GPU the leaf's work takes
//! about as long as reading and checking its file on one core, so reading on the same thread
//! left the GPU waiting (measured: the build at 21M power 10 was host-bound). Here background
//! threads read the points in that order, a few ahead, and the build takes them as it goes.

use super::pietrzak;
use super::points::ProofStore;
use super::ProofError;
use crate::residue::Residue;
use std::sync::mpsc::{sync_channel, Receiver};

/// Reader threads; each keeps up to [`AHEAD`] points ready, so at most READERS·(AHEAD + 1)
/// residues are in memory at once (~60 MB at p = 82.6M).
const READERS: usize = 2;
const AHEAD: usize = 2;

/// Run `f` with a loader that returns the points of `store` in [`pietrzak::load_order`],
/// read by background threads. A request for another index than the next one in that order is
/// an error, not a silent wrong point.
pub fn with_prefetch<T>(
    store: &ProofStore,
    f: impl FnOnce(&mut dyn FnMut(usize) -> Result<Residue, ProofError>) -> Result<T, ProofError>,
) -> Result<T, ProofError> {
    let order = pietrzak::load_order(store.power());
    std::thread::scope(|s| {
        let receivers: Vec<Receiver<Result<Residue, ProofError>>> = (0..READERS)
            .map(|r| {
                let (tx, rx) = sync_channel(AHEAD);
                let mine: Vec<usize> = order.iter().copied().skip(r).step_by(READERS).collect();
                s.spawn(move || {
                    for i in mine {
                        // A closed channel means the build stopped early: stop reading.
                        if tx.send(store.load(i).map_err(ProofError::from)).is_err() {
                            return;
                        }
                    }
                });
                rx
            })
            .collect();
        let mut next = 0usize;
        let mut load = |i: usize| -> Result<Residue, ProofError> {
            match order.get(next) {
                Some(&want) if want == i => {}
                _ => return Err(ProofError::Arith(format!("proof point {i} asked for out of the build's order"))),
            }
            let got =
                receivers[next % READERS].recv().map_err(|_| ProofError::Arith("a point reader stopped".into()))?;
            next += 1;
            got
        };
        let out = f(&mut load);
        drop(receivers); // readers blocked on a full channel now see it closed and end
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proof::arith::CpuArith;

    fn store_with_points(dir: &std::path::Path, p: u32, power: u32) -> (ProofStore, Vec<Residue>) {
        let store = ProofStore::new(dir, p, power).unwrap();
        let mut x = rug::Integer::from(3);
        let mut saved = Vec::new();
        let mut k = 0u64;
        for &point in store.points() {
            while k < point {
                x.square_mut();
                crate::residue::reduce_mersenne(&mut x, p);
                k += 1;
            }
            let r = Residue::from_integer(p, &x);
            store.save(point, &r).unwrap();
            saved.push(r);
        }
        (store, saved)
    }

    #[test]
    fn prefetched_build_equals_the_direct_build() {
        let dir = tempfile::tempdir().unwrap();
        let (p, power) = (4423, 4);
        let (store, saved) = store_with_points(dir.path(), p, power);
        let direct = pietrzak::build(p, power, |i| Ok(saved[i].clone()), &mut CpuArith).unwrap();
        let fetched = with_prefetch(&store, |load| pietrzak::build(p, power, load, &mut CpuArith)).unwrap();
        assert_eq!(fetched.to_gimps_bytes(), direct.to_gimps_bytes());
    }

    #[test]
    fn out_of_order_requests_and_early_stops_are_clean() {
        let dir = tempfile::tempdir().unwrap();
        let (store, _) = store_with_points(dir.path(), 4423, 5);
        let first = pietrzak::load_order(5)[0];
        // The wrong index is refused; stopping after one point leaves no reader hanging.
        let r = with_prefetch(&store, |load| load(first + 1));
        assert!(matches!(r, Err(ProofError::Arith(_))), "{r:?}");
        let r = with_prefetch(&store, |load| load(first).map(|x| x.res64()));
        assert!(r.is_ok());
    }
}
