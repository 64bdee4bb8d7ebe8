//! Several workers on one work directory: who may read, claim and remove worktodo lines, and how
//! a claim is held and recovered.
//!
//! - [`DirLock`]: an advisory lock (flock) on `DIR/worktodo.lock`, taken only while a worker reads
//!   the worktodo files to claim a line, appends a result, or removes a finished line; never
//!   during a test. Every worker of the directory takes it for those steps, so a line is read,
//!   claimed and removed by one worker at a time.
//! - A claim is the test's own state lock ([`StateStore::lock`] on `M<p>-<kind>.lock` beside its
//!   saved states), taken under the directory lock and held by the worker for the whole test. The
//!   kernel releases it when the worker dies, however it dies (kill -9 included), so a dead
//!   worker's claim is free at once and the next worker that scans the file takes the line over
//!   and resumes it from its saved state; a live worker's claim is never taken.
//! - [`Claims`]: the record of the claims in `DIR/claims.txt` (one JSON object per line: the
//!   worktodo line, its file, the worker, its pid, since when), for people and scripts: which
//!   worker runs which line. A record left by a dead worker is replaced by the next claim of
//!   that line; the lock, not the record, decides who may run a line.

use crate::fsutil;
use crate::run::state::{StateLock, StateStore};
use serde_json::{json, Value};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// The lock file of a work directory.
pub const LOCK_FILE: &str = "worktodo.lock";
/// The record of the claims.
pub const CLAIMS_FILE: &str = "claims.txt";

/// The directory lock, held until dropped.
#[derive(Debug)]
pub struct DirLock(#[allow(dead_code)] File);

impl DirLock {
    /// Wait for the lock of work directory `dir` and take it.
    pub fn take(dir: &Path) -> io::Result<DirLock> {
        let f = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(dir.join(LOCK_FILE))?;
        f.lock()?;
        Ok(DirLock(f))
    }
}

/// A test's state lock taken as a claim; `None` when another live worker holds it.
pub fn try_claim(store: &StateStore) -> Result<Option<StateLock>, crate::run::state::StateError> {
    match store.lock() {
        Ok(lock) => Ok(Some(lock)),
        Err(crate::run::state::StateError::Locked { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Give up the claim of a line whose result is written: the lock file is removed while still
/// held, under the directory lock (every claim is taken under it, so no other worker holds the
/// file open), then released.
pub fn release_finished(_dir: &DirLock, lock: StateLock) -> io::Result<()> {
    lock.release()
}

/// The record of the claims of a work directory.
#[derive(Debug, Clone)]
pub struct Claims {
    path: PathBuf,
}

impl Claims {
    pub fn new(dir: &Path) -> Self {
        Claims { path: dir.join(CLAIMS_FILE) }
    }

    fn read(&self) -> io::Result<Vec<Value>> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => Ok(text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    fn write(&self, records: &[Value]) -> io::Result<()> {
        let text: String = records.iter().map(|r| format!("{r}\n")).collect();
        fsutil::write_atomic(&self.path, text.as_bytes(), 0o644)
    }

    fn same(r: &Value, file: &str, line: &str) -> bool {
        r["file"] == file && r["line"] == line
    }

    /// Record that `worker` (this process) now runs `line` of worktodo file `file`, replacing
    /// any record of that line (a dead worker's). Call under the directory lock.
    pub fn record(&self, _dir: &DirLock, file: &str, line: &str, worker: &str) -> io::Result<()> {
        let mut records = self.read()?;
        records.retain(|r| !Self::same(r, file, line));
        records.push(json!({
            "file": file,
            "line": line,
            "worker": worker,
            "pid": std::process::id(),
            "since": crate::run::report::now_rfc3339(),
        }));
        self.write(&records)
    }

    /// Drop the record of `line` of `file` (its result is written, or its worker stops). Call
    /// under the directory lock.
    pub fn release(&self, _dir: &DirLock, file: &str, line: &str) -> io::Result<()> {
        let mut records = self.read()?;
        let before = records.len();
        records.retain(|r| !Self::same(r, file, line));
        if records.len() == before {
            return Ok(());
        }
        self.write(&records)
    }

    /// The (file, line, worker) of every record.
    pub fn list(&self) -> io::Result<Vec<(String, String, String)>> {
        Ok(self
            .read()?
            .iter()
            .map(|r| {
                let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
                (s("file"), s("line"), s("worker"))
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exponent::TestKind;

    #[test]
    fn a_claim_is_held_until_released_and_a_record_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let store = StateStore::at(d, 9689, TestKind::Ll);
        let lock = {
            let _g = DirLock::take(d).unwrap();
            try_claim(&store).unwrap().expect("free")
        };
        // Held: a second claim (another open file, as another process would have) fails.
        assert!(try_claim(&store).unwrap().is_none());
        assert!(!store.dir().exists(), "claiming writes no state");
        let claims = Claims::new(d);
        {
            let g = DirLock::take(d).unwrap();
            claims.record(&g, "worktodo.txt", "Test=9689", "worker 0").unwrap();
            claims.record(&g, "worktodo.txt", "Test=4423", "worker 1").unwrap();
            claims.record(&g, "worktodo.txt", "Test=9689", "worker 2").unwrap();
        }
        let list = claims.list().unwrap();
        assert_eq!(list.len(), 2, "{list:?}");
        assert!(list.contains(&("worktodo.txt".into(), "Test=9689".into(), "worker 2".into())));
        {
            let g = DirLock::take(d).unwrap();
            claims.release(&g, "worktodo.txt", "Test=9689").unwrap();
            claims.release(&g, "worktodo.txt", "Test=9689").unwrap();
            release_finished(&g, lock).unwrap();
        }
        assert_eq!(claims.list().unwrap(), [("worktodo.txt".into(), "Test=4423".into(), "worker 1".into())]);
        assert!(!store.lock_path().exists());
        // Released: free again.
        assert!(try_claim(&store).unwrap().is_some());
    }

    #[test]
    fn the_directory_lock_excludes_another_holder() {
        let dir = tempfile::tempdir().unwrap();
        let held = DirLock::take(dir.path()).unwrap();
        let other = File::options().write(true).open(dir.path().join(LOCK_FILE)).unwrap();
        assert!(matches!(other.try_lock(), Err(std::fs::TryLockError::WouldBlock)));
        drop(held);
        assert!(other.try_lock().is_ok());
    }
}
