//! AutoPrimeNet's lock of a work file: `<file>.lck`, created with O_CREAT|O_EXCL by whoever edits
//! the file and removed when done (autoprimenet.py's `LockFile`; it waits, with a growing sleep,
//! while the file exists). We take the same lock around each read-modify-write of a worktodo
//! file, so neither program replaces the file under the other's edit.
//!
//! AutoPrimeNet's lock file is empty. Ours holds `mersenne-cert <pid>`, so that a lock left by a
//! killed worker of ours (kill -9 in the microseconds it holds it) is recognised as stale (that
//! process is gone) and removed; an empty or foreign lock file is only ever waited for, with a
//! one-line note after a few seconds.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Held until dropped; dropping removes the lock file.
#[derive(Debug)]
pub struct ApnLock {
    path: PathBuf,
}

const OURS: &str = "mersenne-cert";

/// The lock file of `file`: `file` with `.lck` appended (`worktodo.txt.lck`).
pub fn lock_path(file: &Path) -> PathBuf {
    let mut name = file.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".lck");
    file.with_file_name(name)
}

impl ApnLock {
    /// Take the lock of `file`, waiting while another holder has it.
    pub fn take(file: &Path) -> io::Result<ApnLock> {
        let path = lock_path(file);
        let start = Instant::now();
        let mut noted = false;
        let mut sleep = Duration::from_millis(1);
        loop {
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(mut f) => {
                    f.write_all(format!("{OURS} {}\n", std::process::id()).as_bytes())?;
                    return Ok(ApnLock { path });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    if stale(&path) {
                        let _ = std::fs::remove_file(&path);
                        continue;
                    }
                    if !noted && start.elapsed() > Duration::from_secs(5) {
                        eprintln!(
                            "note: waiting for {} (AutoPrimeNet's lock of the work file; remove it if no AutoPrimeNet runs)",
                            path.display()
                        );
                        noted = true;
                    }
                    std::thread::sleep(sleep);
                    sleep = (sleep * 2).min(Duration::from_millis(500));
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for ApnLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether the lock file at `path` is one of ours whose process is gone.
fn stale(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else { return false };
    match text.trim().strip_prefix(OURS).map(str::trim).map(str::parse::<u32>) {
        Some(Ok(pid)) => pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_excludes_until_dropped_and_a_dead_holders_lock_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("worktodo.txt");
        let lck = dir.path().join("worktodo.txt.lck");
        assert_eq!(lock_path(&file), lck);
        let held = ApnLock::take(&file).unwrap();
        assert!(std::fs::read_to_string(&lck).unwrap().starts_with("mersenne-cert "));
        // Another holder (AutoPrimeNet: an empty file) is waited for.
        let waiter = {
            let file = file.clone();
            std::thread::spawn(move || {
                let t = Instant::now();
                drop(ApnLock::take(&file).unwrap());
                t.elapsed()
            })
        };
        std::thread::sleep(Duration::from_millis(200));
        drop(held);
        assert!(waiter.join().unwrap() >= Duration::from_millis(150));
        assert!(!lck.exists());
        std::fs::write(&lck, "").unwrap();
        assert!(!stale(&lck), "AutoPrimeNet's lock is never taken away");
        // A lock of ours whose process is gone (pid beyond pid_max) is stale.
        std::fs::write(&lck, "mersenne-cert 4999999\n").unwrap();
        assert!(stale(&lck));
        drop(ApnLock::take(&file).unwrap());
        assert!(!lck.exists());
    }
}
