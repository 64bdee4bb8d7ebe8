//! Durable file writes: write to a temporary file beside the target, fsync it, rename it over the
//! target, fsync the directory. A crash leaves either the old file or the new one, never a torn
//! one; removals in a stated order. Also the early "can I write there?" probe used before hours
//! of computation.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(format!(".tmp{}", std::process::id()));
    path.with_file_name(name)
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Atomically replace `path` with `bytes` (mode `mode` on Unix, e.g. 0o600 for secrets).
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let tmp = temp_path(path);
    let result = (|| {
        let mut opts = OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, mode);
        let mut f = opts.open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)?;
        File::open(parent_dir(path))?.sync_all()
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Delete `path` if it exists, durably: the directory is fsynced after the removal, so that
/// what the caller deletes next cannot reach the disk before it.
pub fn remove_durably(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Ok(()) => File::open(parent_dir(path))?.sync_all(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Check that a file can be created at `path` (its directory exists and is writable) without
/// touching `path` itself.
pub fn probe_writable(path: &Path) -> io::Result<()> {
    let tmp = temp_path(path);
    File::create(&tmp)?;
    fs::remove_file(&tmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.bin");
        write_atomic(&f, b"one", 0o644).unwrap();
        write_atomic(&f, b"two", 0o644).unwrap();
        assert_eq!(fs::read(&f).unwrap(), b"two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        assert!(probe_writable(&f).is_ok());
        assert!(probe_writable(&dir.path().join("missing/x")).is_err());
        assert!(write_atomic(&dir.path().join("missing/x"), b"", 0o644).is_err());
    }
}
