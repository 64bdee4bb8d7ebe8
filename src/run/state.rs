//! Checkpoints on disk, for resume. One directory per test (exponent + kind) under the state
//! dir; `state.cbor` is the newest saved state, `state.prev.cbor` the one before. Each file is
//! blake3(payload) ‖ payload, written atomically (temp, fsync, rename, fsync dir); a file whose
//! checksum or content does not hold is skipped in favour of the previous one. What a state
//! holds is verified again on load by the caller (Jacobi for LL, a Gerbicz block for PRP).
//! One process at a time works on a test: [`StateStore::lock`] takes an exclusive lock on
//! `M<p>-<kind>.lock` beside the directory (beside it, so that `--fresh` can remove the directory).

use crate::cert::{CheckLog, Checkpoint};
use crate::exponent::TestKind;
use crate::fsutil::{remove_durably, write_atomic};
use crate::residue::Residue;
use serde::{Deserialize, Serialize};
use serde_bytes::ByteBuf;
use std::path::{Path, PathBuf};
use thiserror::Error;

const VERSION: u32 = 1;
const CURRENT: &str = "state.cbor";
const PREVIOUS: &str = "state.prev.cbor";
/// A new state, complete on disk before it replaces the current one.
const NEW: &str = "state.new.cbor";
/// How long [`StateStore::lock`] waits for a holder that is exiting (killed, its files not yet
/// closed by the kernel) to let the lock go.
const DYING_HOLDER_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Why the state directory could not be used.
#[derive(Debug, Error)]
pub enum StateError {
    #[error("state directory {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// A file of the state directory that cannot be used, named with its role.
    #[error("{role} {path}: {source}")]
    File { role: &'static str, path: PathBuf, source: std::io::Error },
    #[error("saved state {path} is unusable: {why}")]
    Corrupt { path: PathBuf, why: String },
    #[error(
        "another prove is running this test ({holder}; lock {path}); wait for it to finish, or use another --state-dir"
    )]
    Locked { path: PathBuf, holder: String },
}

/// The exclusive lock on a test's state; released when dropped (or when the process ends),
/// its file left in place; [`StateLock::release`] removes the file too.
#[derive(Debug)]
pub struct StateLock {
    file: std::fs::File,
    path: PathBuf,
}

impl StateLock {
    /// Release the lock and remove its file (the test is finished): the file goes while the lock
    /// is still held, so no other process holds it then; one that opened it before and takes it
    /// after finds it no longer at its path and takes the lock anew ([`StateStore::lock`]). Not
    /// made durable (no fsync of the directory): a lock file that a crash brings back is only
    /// an empty file, which the next run takes.
    pub fn release(self) -> std::io::Result<()> {
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        drop(self.file);
        Ok(())
    }
}

/// Is `f` (open) the file at `path` now? Not when the path was removed or replaced since it was
/// opened.
fn still_at(f: &std::fs::File, path: &Path) -> std::io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let (open, named) = (f.metadata()?, std::fs::metadata(path));
    Ok(named.is_ok_and(|n| (n.dev(), n.ino()) == (open.dev(), open.ino())))
}

/// Is process `pid` gone or on its way out (a zombie, or its memory already released, as after
/// SIGKILL while the kernel closes its files)? Linux: /proc; elsewhere never.
fn exiting(pid: u32) -> bool {
    if !cfg!(target_os = "linux") {
        return false;
    }
    let dir = Path::new("/proc").join(pid.to_string());
    let Ok(stat) = std::fs::read_to_string(dir.join("stat")) else { return true };
    // "pid (comm) S ...": the state follows the last ')'.
    let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next());
    matches!(state, Some('Z' | 'X' | 'x'))
        || std::fs::read(dir.join("cmdline")).is_ok_and(|c| c.is_empty())
        || std::fs::read_to_string(dir.join("status")).is_ok_and(|s| sigkill_pending(&s))
}

/// Does a /proc/PID/status text show a SIGKILL sent but not yet acted on (bit 9 of the
/// process's or a thread's pending set)? Just after `kill -9` the holder may not have run yet
/// (a loaded machine): it is dying all the same.
fn sigkill_pending(status: &str) -> bool {
    const SIGKILL_BIT: u64 = 1 << (libc::SIGKILL - 1);
    status
        .lines()
        .filter_map(|l| l.strip_prefix("ShdPnd:").or_else(|| l.strip_prefix("SigPnd:")))
        .any(|mask| u64::from_str_radix(mask.trim(), 16).is_ok_and(|m| m & SIGKILL_BIT != 0))
}

/// Everything needed to resume a test exactly where it was saved.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SavedState {
    pub version: u32,
    pub exponent: u32,
    pub kind: TestKind,
    pub shift: u32,
    pub total: u64,
    pub every: u64,
    pub full_every: u64,
    pub gerbicz_block: u64,
    pub started: String,
    /// Iteration k of the saved residue.
    pub iteration: u64,
    /// x_k, canonical bytes.
    pub residue: ByteBuf,
    /// PRP: x_{k−L}, so that x_{k−L}^(2^L) = x_k can be re-verified on load.
    pub previous: Option<ByteBuf>,
    pub chain: Vec<Checkpoint>,
    pub checks: CheckLog,
}

impl SavedState {
    pub fn residue(&self) -> Result<Residue, String> {
        Residue::from_bytes(self.exponent, &self.residue).map_err(|e| e.to_string())
    }
    pub fn previous(&self) -> Result<Option<Residue>, String> {
        self.previous.as_ref().map(|b| Residue::from_bytes(self.exponent, b).map_err(|e| e.to_string())).transpose()
    }
}

/// The on-disk home of one test's saved states.
#[derive(Debug, Clone)]
pub struct StateStore {
    dir: PathBuf,
    p: u32,
}

impl StateStore {
    /// The store for M_p and kind under `root` (created if missing; an unwritable root is an
    /// error now rather than after hours of work).
    pub fn open(root: &Path, p: u32, kind: TestKind) -> Result<Self, StateError> {
        let store = Self::at(root, p, kind);
        let dir = store.dir.clone();
        std::fs::create_dir_all(&dir).map_err(|source| StateError::Io { path: dir.clone(), source })?;
        // Each state file is a regular file or absent (a directory, FIFO or link there is
        // refused, named, before any work); the probe also finds an unwritable directory.
        for name in [CURRENT, PREVIOUS, NEW] {
            let path = dir.join(name);
            let file = |source| StateError::File { role: "saved state", path: path.clone(), source };
            crate::fsutil::require_regular_or_absent(&path).map_err(file)?;
            if name == CURRENT {
                crate::fsutil::probe_writable(&path).map_err(file)?;
            }
        }
        Ok(store)
    }

    /// The store for M_p and kind under `root`, without creating its directory (so that its lock
    /// can be taken, or found taken, before anything is written).
    pub fn at(root: &Path, p: u32, kind: TestKind) -> Self {
        StateStore { dir: root.join(format!("M{p}-{}", kind.worktype())), p }
    }

    /// The lock file of [`StateStore::lock`], beside the directory.
    pub fn lock_path(&self) -> PathBuf {
        self.dir.with_extension("lock")
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Take the test's lock, or say who holds it. A holder that is exiting (killed: the kernel
    /// has not closed its files yet, which can take seconds with a GPU) is waited for, up to
    /// DYING_HOLDER_WAIT; a live one is reported at once. The lock file must be a regular file
    /// (or new): anything else there is refused, named.
    pub fn lock(&self) -> Result<StateLock, StateError> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let path = self.lock_path();
        let io = |source| StateError::File { role: "lock file", path: path.clone(), source };
        let start = std::time::Instant::now();
        // A holder that finished removes the file while holding it: a lock taken on a file that
        // is no longer at the path is let go and taken again on the new one.
        loop {
            crate::fsutil::require_regular_or_absent(&path).map_err(io)?;
            // Not followed, and without blocking (a FIFO put there since the check).
            let mut f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                .open(&path)
                .map_err(io)?;
            match f.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    let holder = std::fs::read_to_string(&path).unwrap_or_default().trim().to_string();
                    let pid = holder.strip_prefix("pid ").and_then(|n| n.parse::<u32>().ok());
                    if pid.is_some_and(exiting) && start.elapsed() < DYING_HOLDER_WAIT {
                        std::thread::sleep(std::time::Duration::from_millis(50));
                        continue;
                    }
                    let holder = if holder.is_empty() { "holder unknown".into() } else { holder };
                    return Err(StateError::Locked { path, holder });
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
            }
            if !still_at(&f, &path).map_err(io)? {
                continue;
            }
            f.set_len(0).map_err(io)?;
            write!(f, "pid {}", std::process::id()).and_then(|_| f.flush()).map_err(io)?;
            return Ok(StateLock { file: f, path });
        }
    }

    /// Save: the current file becomes the previous one, then the new one is put in place.
    pub fn save(&self, s: &SavedState) -> Result<(), StateError> {
        let mut payload = Vec::new();
        ciborium::into_writer(s, &mut payload)
            .map_err(|e| StateError::Corrupt { path: self.dir.clone(), why: e.to_string() })?;
        let mut bytes = blake3::hash(&payload).as_bytes().to_vec();
        bytes.extend_from_slice(&payload);
        let cur = self.dir.join(CURRENT);
        let tmp_new = self.dir.join(NEW);
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| StateError::Io { path, source }
        };
        // Write the new state completely before touching the old ones: a full disk fails here.
        write_atomic(&tmp_new, &bytes, 0o644).map_err(io(&tmp_new))?;
        if cur.exists() {
            std::fs::rename(&cur, self.dir.join(PREVIOUS)).map_err(io(&cur))?;
        }
        std::fs::rename(&tmp_new, &cur).map_err(io(&cur))?;
        std::fs::File::open(&self.dir).and_then(|d| d.sync_all()).map_err(io(&self.dir))
    }

    /// The largest state file of M_p: its full residues (at most MAX_FULL_RESIDUES, the last
    /// and the PRP's two), a hash per checkpoint (at most one per 64 iterations, about 64 bytes
    /// each) and the check log.
    fn max_bytes(p: u32) -> u64 {
        let residue = crate::residue::byte_count(p) as u64;
        (crate::run::checkpoints::MAX_FULL_RESIDUES + 3) * residue + p as u64 + (64 << 20)
    }

    fn read(&self, path: &Path) -> Result<SavedState, StateError> {
        let corrupt = |why: String| StateError::Corrupt { path: path.to_path_buf(), why };
        let bytes = crate::fsutil::read_regular(path, Self::max_bytes(self.p)).map_err(|source| StateError::File {
            role: "saved state",
            path: path.to_path_buf(),
            source,
        })?;
        if bytes.len() < 32 {
            return Err(corrupt("truncated".into()));
        }
        let (sum, payload) = bytes.split_at(32);
        if blake3::hash(payload).as_bytes() != sum {
            return Err(corrupt("checksum mismatch".into()));
        }
        let s: SavedState = ciborium::from_reader(payload).map_err(|e| corrupt(e.to_string()))?;
        if s.version != VERSION {
            return Err(corrupt(format!("unknown version {}", s.version)));
        }
        s.residue().map_err(corrupt)?;
        s.previous().map_err(corrupt)?;
        Ok(s)
    }

    /// The saved states, newest first, each either readable or the reason it is not. Files
    /// that do not exist are left out.
    pub fn candidates(&self) -> Vec<Result<SavedState, StateError>> {
        let present = |p: &PathBuf| p.symlink_metadata().is_ok();
        [CURRENT, PREVIOUS].iter().map(|n| self.dir.join(n)).filter(present).map(|p| self.read(&p)).collect()
    }

    /// The names of the saved state files present, newest first.
    pub fn file_names(&self) -> Vec<String> {
        [CURRENT, PREVIOUS]
            .iter()
            .filter(|n| self.dir.join(n).symlink_metadata().is_ok())
            .map(|n| n.to_string())
            .collect()
    }

    /// Delete the saved state files, newest first, durably. Whatever else the directory holds
    /// (the proof points a state relies on) must go only after this: a run killed or crashing
    /// on the way then leaves either a state with everything it needs or no state, never a
    /// state whose proof points are gone.
    pub fn forget(&self) -> Result<(), StateError> {
        for name in [CURRENT, PREVIOUS] {
            let path = self.dir.join(name);
            remove_durably(&path).map_err(|source| StateError::Io { path, source })?;
        }
        Ok(())
    }

    /// Delete the saved states, then the directory with everything in it (the test is finished
    /// or the user asked for a fresh start).
    pub fn clear(&self) -> Result<(), StateError> {
        self.forget()?;
        match std::fs::remove_dir_all(&self.dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(StateError::Io { path: self.dir.clone(), source }),
        }
    }
}

/// The default state root: the user's data directory.
pub fn default_root() -> PathBuf {
    dirs::data_dir().unwrap_or_else(std::env::temp_dir).join("mersenne-cert")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_pending_sigkill_reads_as_dying() {
        let status =
            |shd: &str| format!("Name:\tprove\nState:\tR (running)\nSigPnd:\t0000000000000000\nShdPnd:\t{shd}\n");
        assert!(super::sigkill_pending(&status("0000000000000100")));
        assert!(super::sigkill_pending(&status("0000000000004100")));
        assert!(!super::sigkill_pending(&status("0000000000004000")), "SIGTERM alone is not dying");
        assert!(!super::sigkill_pending(&status("zz")) && !super::sigkill_pending("State: S"));
    }

    use super::*;

    fn state(k: u64) -> SavedState {
        SavedState {
            version: VERSION,
            exponent: 89,
            kind: TestKind::Ll,
            shift: 3,
            total: 87,
            every: 1,
            full_every: 1,
            gerbicz_block: 0,
            started: "t".into(),
            iteration: k,
            residue: ByteBuf::from(Residue::from_u64(89, k).to_bytes()),
            previous: None,
            chain: vec![],
            checks: CheckLog::default(),
        }
    }

    #[test]
    fn keeps_previous_and_detects_corruption() {
        let root = tempfile::tempdir().unwrap();
        let st = StateStore::open(root.path(), 89, TestKind::Ll).unwrap();
        assert!(st.candidates().is_empty());
        st.save(&state(5)).unwrap();
        st.save(&state(9)).unwrap();
        let c = st.candidates();
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].as_ref().unwrap().iteration, 9);
        assert_eq!(c[1].as_ref().unwrap().iteration, 5);
        // Flip one byte of the newest: it is reported corrupt, the previous still loads.
        let cur = st.dir().join(CURRENT);
        let mut b = std::fs::read(&cur).unwrap();
        let n = b.len() - 3;
        b[n] ^= 0x40;
        std::fs::write(&cur, b).unwrap();
        let c = st.candidates();
        assert!(matches!(c[0], Err(StateError::Corrupt { .. })));
        assert_eq!(c[1].as_ref().unwrap().iteration, 5);
        // forget() takes the states and leaves the rest; clear() takes the directory.
        std::fs::write(st.dir().join("other"), b"x").unwrap();
        st.forget().unwrap();
        assert!(st.candidates().is_empty());
        assert!(st.dir().join("other").exists());
        st.forget().unwrap();
        st.clear().unwrap();
        assert!(!st.dir().exists());
    }

    #[test]
    fn a_second_lock_is_refused_naming_the_holder() {
        let root = tempfile::tempdir().unwrap();
        let st = StateStore::open(root.path(), 89, TestKind::Ll).unwrap();
        let held = st.lock().unwrap();
        let err = st.lock().unwrap_err().to_string();
        assert!(err.contains(&format!("pid {}", std::process::id())), "{err}");
        // The lock survives --fresh (which removes the directory) and goes with its holder.
        st.clear().unwrap();
        assert!(st.lock().is_err());
        drop(held);
        st.lock().unwrap();
    }

    #[test]
    fn release_removes_the_lock_file_and_a_stale_handle_takes_the_new_one() {
        let root = tempfile::tempdir().unwrap();
        let st = StateStore::open(root.path(), 89, TestKind::Ll).unwrap();
        let held = st.lock().unwrap();
        // Another process opened the file before the holder released it, and locks it after.
        let early = std::fs::File::open(st.lock_path()).unwrap();
        held.release().unwrap();
        assert!(!st.lock_path().exists());
        early.try_lock().unwrap();
        assert!(!still_at(&early, &st.lock_path()).unwrap());
        // The next lock is on a new file at the path, and exclusive again.
        let next = st.lock().unwrap();
        assert!(st.lock().is_err());
        next.release().unwrap();
    }

    #[test]
    fn state_and_lock_files_that_are_not_regular_are_named_with_their_role() {
        let root = tempfile::tempdir().unwrap();
        let st = StateStore::open(root.path(), 89, TestKind::Ll).unwrap();
        let cur = st.dir().join(CURRENT);
        std::fs::create_dir(&cur).unwrap();
        let e = StateStore::open(root.path(), 89, TestKind::Ll).unwrap_err().to_string();
        assert!(e.starts_with(&format!("saved state {}: it is a directory", cur.display())), "{e}");
        std::fs::remove_dir(&cur).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &cur).unwrap();
        let e = StateStore::open(root.path(), 89, TestKind::Ll).unwrap_err().to_string();
        assert!(e.contains("state.cbor: it is a symbolic link"), "{e}");
        // Met on resume (put there after the open): refused without reading /dev/zero.
        let c = st.candidates();
        assert!(matches!(&c[0], Err(StateError::File { role: "saved state", .. })), "{c:?}");
        std::fs::remove_file(&cur).unwrap();
        let fifo = |path: &Path| std::process::Command::new("mkfifo").arg(path).status().is_ok_and(|s| s.success());
        if fifo(&cur) {
            let c = st.candidates();
            assert!(c[0].as_ref().unwrap_err().to_string().contains("a FIFO"), "{c:?}");
            std::fs::remove_file(&cur).unwrap();
        }
        if fifo(&st.lock_path()) {
            let e = st.lock().unwrap_err().to_string();
            assert!(e.starts_with(&format!("lock file {}: it is a FIFO", st.lock_path().display())), "{e}");
        }
    }

    #[test]
    fn a_lock_whose_holder_is_exiting_is_waited_for() {
        let root = tempfile::tempdir().unwrap();
        let st = StateStore::open(root.path(), 89, TestKind::Ll).unwrap();
        let mut held = st.lock().unwrap();
        // The holder's file names a process that is gone (Linux pids are below 2^22), as after
        // SIGKILL: the lock is waited for, and taken when the kernel lets it go.
        {
            use std::io::{Seek, Write};
            held.file.set_len(0).unwrap();
            held.file.rewind().unwrap();
            write!(held.file, "pid 4194305").unwrap();
        }
        assert!(exiting(4194305) && !exiting(std::process::id()));
        let t = std::time::Instant::now();
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            drop(held);
        });
        st.lock().unwrap();
        assert!(t.elapsed() >= std::time::Duration::from_millis(250));
        release.join().unwrap();
    }

    #[test]
    fn unwritable_root_is_an_error() {
        assert!(StateStore::open(Path::new("/proc/no-such-dir"), 89, TestKind::Ll).is_err());
    }
}
