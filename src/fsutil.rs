//! Durable file writes: write to a temporary file beside the target, fsync it, rename it over the
//! target, fsync the directory. A crash leaves either the old file or the new one, never a torn
//! one; removals in a stated order. Also the early "can I write there?" checks used before hours
//! of computation (outputs must be regular files or new), whole-line appends, the clean-up of
//! temporaries a killed run left, and bounded reads of regular files only.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What every temporary of [`write_atomic`] inserts between the target's name and its writer's
/// pid: `<name>.tmp.mersenne-cert.<pid>.<16 hex digits>`. Only files of exactly this shape are
/// ever removed as stale ([`remove_stale_temps`]), so a user's `notes.tmp123` is never touched.
const TEMP_TAG: &str = ".tmp.mersenne-cert.";

fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    let mut random = [0u8; 8];
    // No randomness (never seen on Linux): the pid alone still keeps writers apart.
    let _ = getrandom::getrandom(&mut random);
    name.push(format!("{TEMP_TAG}{}.{:016x}", std::process::id(), u64::from_le_bytes(random)));
    path.with_file_name(name)
}

/// The pid of the writer of a temporary named `file_name` beside the target `name`, when
/// `file_name` has exactly the shape [`temp_path`] gives.
fn temp_writer(file_name: &str, name: &str) -> Option<u32> {
    let rest = file_name.strip_prefix(name)?.strip_prefix(TEMP_TAG)?;
    let (pid, random) = rest.split_once('.')?;
    let canonical = pid.parse::<u32>().ok().filter(|n| n.to_string() == pid)?;
    (random.len() == 16 && random.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
        .then_some(canonical)
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Atomically replace `path` with `bytes` (mode `mode` on Unix, e.g. 0o600 for secrets).
/// `path` must be a regular file or new: a device, FIFO, directory or symbolic link there is
/// refused, never replaced.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    require_regular_or_new(path)?;
    let tmp = temp_path(path);
    let result = (|| {
        let mut opts = OpenOptions::new();
        // The name is new (pid and random): never follow or reuse what lies there.
        opts.write(true).create_new(true);
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

fn invalid(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, why.to_string())
}

/// What kind of file `meta` describes, for messages.
fn kind_name(meta: &fs::Metadata) -> &'static str {
    let t = meta.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "not a regular file"
    }
}

/// `path` is absent or a regular file (not followed if it is a symbolic link).
fn require_regular_or_new(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_file() => Ok(()),
        Ok(m) => Err(invalid(&format!("it is {}; an output must be a regular file or a new one", kind_name(&m)))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// `path` is absent or a regular file (not followed if it is a symbolic link): for the files a
/// program keeps for itself (a lock), where anything else is refused, named.
pub fn require_regular_or_absent(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_file() => Ok(()),
        Ok(m) => Err(invalid(&format!("it is {}, not a regular file; remove it", kind_name(&m)))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Check, before any work, that [`write_atomic`] can later write `path`: it is a regular file or
/// new, and a file can be created in its directory (which must exist). `path` is not touched.
pub fn probe_writable(path: &Path) -> io::Result<()> {
    require_regular_or_new(path)?;
    let tmp = temp_path(path);
    OpenOptions::new().write(true).create_new(true).open(&tmp)?;
    fs::remove_file(&tmp)
}

/// Check, before any work, that [`append_line`] can later append to `path`: an existing regular
/// file opened for appending (nothing is written), or a new file its directory can hold.
pub fn probe_appendable(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_file() => OpenOptions::new().append(true).open(path).map(drop),
        _ => probe_writable(path),
    }
}

/// Append `line` and a newline to `path` (created if new) as one whole line, on a line of its
/// own: after a last line that lacks its newline (a file edited by hand), one is put first. On
/// failure (a full disk) the file is truncated back to its previous length, so it never ends
/// in a torn line.
pub fn append_line(path: &Path, line: &str) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    require_regular_or_new(path)?;
    let mut f = OpenOptions::new().create(true).read(true).append(true).open(path)?;
    let before = f.metadata()?.len();
    let mut bytes = Vec::with_capacity(line.len() + 2);
    let mut last = [b'\n'];
    if before > 0 {
        f.read_exact_at(&mut last, before - 1)?;
    }
    if last[0] != b'\n' {
        bytes.push(b'\n');
    }
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    let written = f.write_all(&bytes).and_then(|()| f.sync_data());
    if written.is_err() {
        let _ = f.set_len(before);
    }
    written
}

/// Which file `path` names: its (device, inode) when it exists (a symbolic link followed), else
/// its directory's canonical path and its name. Two paths of one identity are one file.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Identity {
    Inode(u64, u64),
    New(PathBuf),
}

fn identity(path: &Path) -> Identity {
    use std::os::unix::fs::MetadataExt;
    if let Ok(m) = fs::metadata(path) {
        return Identity::Inode(m.dev(), m.ino());
    }
    let dir = fs::canonicalize(parent_dir(path)).unwrap_or_else(|_| parent_dir(path).to_path_buf());
    Identity::New(dir.join(path.file_name().unwrap_or_default()))
}

/// Is `path` (existing or not) inside the directory `dir`?
fn inside(path: &Path, dir: &Path) -> bool {
    let Ok(dir) = fs::canonicalize(dir) else { return false };
    let file = match identity(path) {
        Identity::New(p) => p,
        Identity::Inode(..) => fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
    };
    file.starts_with(dir)
}

/// Refuse outputs that would destroy one another or a file of ours, before any work: each of
/// `outputs` (what, path) must be another file than every other output and every file of `ours`
/// (a signing key, a lock), and lie outside every directory of `dirs` (a state directory,
/// deleted when the test ends). Paths are compared as files (device and inode, or the
/// canonical directory of a new one), so `./a` and `dir/../a`, or a hard link, are one file.
pub fn check_distinct(outputs: &[(&str, &Path)], ours: &[(&str, &Path)], dirs: &[(&str, &Path)]) -> io::Result<()> {
    for (i, &(what, path)) in outputs.iter().enumerate() {
        let id = identity(path);
        let clash = outputs[..i].iter().chain(ours).find(|(_, other)| identity(other) == id);
        if let Some((other_what, other)) = clash {
            return Err(invalid(&format!(
                "{what} {} is the same file as {other_what} {}: one would destroy the other",
                path.display(),
                other.display()
            )));
        }
        if let Some((dir_what, dir)) = dirs.iter().find(|(_, dir)| inside(path, dir)) {
            return Err(invalid(&format!(
                "{what} {} lies in {dir_what} {}, which is deleted when the test ends",
                path.display(),
                dir.display()
            )));
        }
    }
    Ok(())
}

/// Is there a running process with this id? (Unix: /proc; elsewhere assume yes, keep the file.)
fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new("/proc").join(pid.to_string()).exists()
    } else {
        true
    }
}

/// Remove the temporaries `<name>.tmp.mersenne-cert.<PID>.<random>` that [`write_atomic`] of
/// `path` left behind in a process that no longer runs (killed during the write); no other
/// file is touched. Returns how many were removed.
pub fn remove_stale_temps(path: &Path) -> io::Result<usize> {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return Ok(0) };
    let entries = match fs::read_dir(parent_dir(path)) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry?;
        let Some(pid) = entry.file_name().to_str().and_then(|n| temp_writer(n, name)) else { continue };
        if pid == std::process::id() || process_alive(pid) {
            continue;
        }
        if entry.file_type()?.is_file() {
            fs::remove_file(entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Read a regular file of at most `max` bytes. Anything else (a FIFO, a device such as
/// /dev/zero, a directory) is refused without blocking, and a longer file with
/// [`io::ErrorKind::FileTooLarge`].
pub fn read_regular(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let mut opts = OpenOptions::new();
    opts.read(true);
    // Opening a FIFO for reading would wait for a writer: open without blocking, check the type.
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut opts, libc::O_NONBLOCK);
    let f = opts.open(path)?;
    let meta = f.metadata()?;
    if !meta.file_type().is_file() {
        return Err(invalid(&format!("it is {}, not a regular file", kind_name(&meta))));
    }
    let too_large =
        || io::Error::new(io::ErrorKind::FileTooLarge, format!("it has more than the {max} bytes it can have"));
    if meta.len() > max {
        return Err(too_large());
    }
    let mut out = Vec::with_capacity(meta.len() as usize);
    f.take(max + 1).read_to_end(&mut out)?;
    if out.len() as u64 > max {
        return Err(too_large());
    }
    Ok(out)
}

/// Does anyone but the owner (group or others) have read access to `path`? (Unix; else false.)
pub fn readable_by_others(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o044 != 0)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
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

    /// A FIFO at `path` (via mkfifo(1)); false where it cannot be made.
    fn mkfifo(path: &Path) -> bool {
        std::process::Command::new("mkfifo").arg(path).status().is_ok_and(|s| s.success())
    }

    #[test]
    fn outputs_must_be_regular_or_new() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("out");
        assert!(probe_writable(&f).is_ok());
        fs::write(&f, b"old").unwrap();
        assert!(probe_writable(&f).is_ok());
        // A directory, a symbolic link (even to a regular file), a device, a FIFO: refused, untouched.
        let e = probe_writable(dir.path()).unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        assert!(probe_writable(&link).unwrap_err().to_string().contains("symbolic link"));
        assert!(write_atomic(&link, b"new", 0o644).is_err());
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read(&f).unwrap(), b"old");
        assert!(write_atomic(Path::new("/dev/null"), b"x", 0o644).unwrap_err().to_string().contains("a device"));
        let fifo = dir.path().join("fifo");
        if mkfifo(&fifo) {
            assert!(probe_writable(&fifo).unwrap_err().to_string().contains("a FIFO"));
            assert!(append_line(&fifo, "x").is_err());
        }
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2 + fifo.exists() as usize);
    }

    #[test]
    fn appends_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("results.txt");
        probe_appendable(&f).unwrap();
        assert!(!f.exists(), "the probe creates nothing");
        append_line(&f, "one").unwrap();
        probe_appendable(&f).unwrap();
        append_line(&f, "two").unwrap();
        assert_eq!(fs::read_to_string(&f).unwrap(), "one\ntwo\n");
        assert!(probe_appendable(dir.path()).is_err());
        assert!(probe_appendable(&dir.path().join("missing/x")).is_err());
        // /dev/full: every write fails with ENOSPC.
        if Path::new("/dev/full").exists() {
            assert!(append_line(Path::new("/dev/full"), "x").is_err());
        }
    }

    #[test]
    fn a_line_is_never_glued_to_a_last_line_without_its_newline() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("results.txt");
        fs::write(&f, b"edited by hand").unwrap();
        append_line(&f, "one").unwrap();
        append_line(&f, "two").unwrap();
        assert_eq!(fs::read_to_string(&f).unwrap(), "edited by hand\none\ntwo\n");
        fs::write(&f, b"").unwrap();
        append_line(&f, "one").unwrap();
        assert_eq!(fs::read_to_string(&f).unwrap(), "one\n");
    }

    #[test]
    fn outputs_that_are_one_file_or_ours_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let (a, b, key) = (d.join("a"), d.join("b"), d.join("key"));
        fs::write(&key, b"secret").unwrap();
        let state = d.join("state");
        fs::create_dir(&state).unwrap();
        let ok = |outs: &[(&str, &Path)]| {
            check_distinct(outs, &[("the signing key", &key)], &[("the state directory", &state)])
        };
        ok(&[("--cert", &a), ("--json", &b)]).unwrap();
        // The same new file twice, also spelt differently.
        let again = d.join("state/../a");
        let e = ok(&[("--cert", &a), ("--json", &again)]).unwrap_err().to_string();
        assert!(e.contains("--json") && e.contains("same file as --cert"), "{e}");
        // An existing file through a hard link; the key.
        fs::write(&a, b"x").unwrap();
        fs::hard_link(&a, &b).unwrap();
        assert!(ok(&[("--cert", &a), ("--gimps-proof", &b)]).is_err());
        let e = ok(&[("--cert", &key)]).unwrap_err().to_string();
        assert!(e.contains("the signing key"), "{e}");
        // Anything inside the state directory.
        let e = ok(&[("--cert", &state.join("c"))]).unwrap_err().to_string();
        assert!(e.contains("deleted when the test ends"), "{e}");
        assert_eq!(fs::read(&key).unwrap(), b"secret");
    }

    #[test]
    fn stale_temporaries_of_dead_writers_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("c.cert");
        let tag = TEMP_TAG;
        let own = format!("c.cert{tag}{}.0123456789abcdef", std::process::id());
        // Linux pids are below 2^22: 4194305 does not run. Only our exact shape, of a dead
        // writer, of this very name, goes; a user's files of similar names stay (issue 35).
        let gone = [format!("c.cert{tag}4194305.0123456789abcdef"), format!("c.cert{tag}4294967295.fedcba9876543210")];
        let kept = [
            own.clone(),
            "c.cert.tmp4194305".into(),
            "c.cert.tmp999999".into(),
            format!("c.cert{tag}4194305.0123456789ABCDEF"),
            format!("c.cert{tag}4194305.0123"),
            format!("c.cert{tag}04194305.0123456789abcdef"),
            format!("c.cert{tag}4194305.0123456789abcdef.bak"),
            format!("d.cert{tag}4194305.0123456789abcdef"),
            format!("xc.cert{tag}4194305.0123456789abcdef"),
        ];
        for n in gone.iter().chain(&kept) {
            fs::write(dir.path().join(n), b"").unwrap();
        }
        assert_eq!(remove_stale_temps(&f).unwrap(), 2);
        let mut left: Vec<String> =
            fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        left.sort();
        let mut want = kept.to_vec();
        want.sort();
        assert_eq!(left, want);
        assert_eq!(remove_stale_temps(&dir.path().join("missing/c.cert")).unwrap(), 0);
        // What write_atomic makes has the shape removed here.
        let t = temp_path(&f);
        assert_eq!(temp_writer(t.file_name().unwrap().to_str().unwrap(), "c.cert"), Some(std::process::id()));
        assert_ne!(temp_path(&f), t, "two temporaries of one process differ");
    }

    #[test]
    fn reads_only_bounded_regular_files() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("in");
        fs::write(&f, b"12345").unwrap();
        assert_eq!(read_regular(&f, 5).unwrap(), b"12345");
        assert_eq!(read_regular(&f, 4).unwrap_err().kind(), io::ErrorKind::FileTooLarge);
        assert!(read_regular(Path::new("/dev/zero"), 1 << 20).unwrap_err().to_string().contains("a device"));
        assert!(read_regular(dir.path(), 1 << 20).is_err());
        let fifo = dir.path().join("fifo");
        if mkfifo(&fifo) {
            // Refused at once, not blocked waiting for a writer.
            assert!(read_regular(&fifo, 1 << 20).unwrap_err().to_string().contains("a FIFO"));
        }
        fs::set_permissions(&f, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
        assert!(!readable_by_others(&f));
        fs::set_permissions(&f, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
        assert!(readable_by_others(&f));
    }
}
