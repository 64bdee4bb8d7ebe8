//! PRP proof points written to disk on a thread of their own. Each point is a file written
//! atomically (temporary, fsync, rename, fsync of the directory): a few milliseconds of disk
//! waits per point, hundreds of points per test, and on the driver's thread the engine stood
//! idle through them (they are written right after a Gerbicz check, when no work is queued),
//! longer still while other workers' points queue on the same disk. Here the driver hands the
//! verified points over and goes on; [`PointWriter::sync`] waits until every point handed over
//! is on disk, which the driver does before any saved state (a state at k claims the points up to
//! k) and before the run ends (the proof is built from the files).

use crate::proof::points::{ProofStore, StoreError};
use crate::residue::Residue;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Points handed over but not yet written, at most (then [`PointWriter::save`] waits).
const QUEUE: usize = 16;

enum Msg {
    Save(u64, Residue),
    Sync(SyncSender<Result<(), StoreError>>),
}

/// The writer thread of one run's proof points.
pub struct PointWriter {
    tx: Option<SyncSender<Msg>>,
    handle: Option<JoinHandle<()>>,
}

impl PointWriter {
    pub fn new(store: ProofStore) -> Self {
        let (tx, rx) = sync_channel::<Msg>(QUEUE);
        let handle = std::thread::spawn(move || write_points(&store, rx));
        PointWriter { tx: Some(tx), handle: Some(handle) }
    }

    fn send(&self, m: Msg) -> Result<(), StoreError> {
        self.tx.as_ref().and_then(|tx| tx.send(m).ok()).ok_or_else(stopped)
    }

    /// Hand point `iteration` (verified) over to be written.
    pub fn save(&self, iteration: u64, x: Residue) -> Result<(), StoreError> {
        self.send(Msg::Save(iteration, x))
    }

    /// Wait until every point handed over is written; the first write that failed, if any.
    pub fn sync(&self) -> Result<(), StoreError> {
        let (reply, answer) = sync_channel(1);
        self.send(Msg::Sync(reply))?;
        answer.recv().map_err(|_| stopped())?
    }
}

fn stopped() -> StoreError {
    StoreError::Io { path: "proof points".into(), source: std::io::Error::other("the proof point writer stopped") }
}

/// The thread: write each point; a failure is kept and answered at every later sync (the points
/// after it are not written: the run stops at that sync).
fn write_points(store: &ProofStore, rx: Receiver<Msg>) {
    let mut failed: Option<StoreError> = None;
    for m in rx {
        match m {
            Msg::Save(i, x) if failed.is_none() => failed = store.save(i, &x).err(),
            Msg::Save(..) => {}
            Msg::Sync(reply) => {
                let answer = match &failed {
                    None => Ok(()),
                    Some(e) => Err(StoreError::Io {
                        path: "proof points".into(),
                        source: std::io::Error::other(e.to_string()),
                    }),
                };
                let _ = reply.send(answer);
            }
        }
    }
}

impl Drop for PointWriter {
    fn drop(&mut self) {
        drop(self.tx.take()); // the thread writes what it holds, then ends
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_are_on_disk_after_sync_and_a_failure_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let p = 9689;
        let store = ProofStore::new(dir.path(), p, 3).unwrap();
        let points = store.points().to_vec();
        let w = PointWriter::new(store.clone());
        for (n, &i) in points.iter().enumerate() {
            w.save(i, Residue::from_u64(p, 3 + n as u64)).unwrap();
        }
        w.sync().unwrap();
        for n in 0..points.len() {
            assert_eq!(store.load(n).unwrap(), Residue::from_u64(p, 3 + n as u64));
        }
        // Not a point of this store: the write fails, and the next sync says so.
        w.save(points[0] + 1, Residue::from_u64(p, 3)).unwrap();
        assert!(w.sync().is_err());
        assert!(w.sync().is_err(), "the failure stays");
    }
}
