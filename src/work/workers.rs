//! `prove --work-dir DIR --devices all`: one worker per GPU, each a child process of the same
//! program (`--device N`: its own CUDA context, its own `worktodo-N.txt` and `state-N/`, then
//! lines claimed from the shared `worktodo.txt`), all appending to the one `results.json.txt`.
//! The parent waits for them and exits with the worst status (1 if one failed, else 130 if one
//! was interrupted, else 0).

use anyhow::{bail, Context, Result};
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

/// The devices that have work: every one when the shared `DIR/worktodo.txt` exists, else GPU n
/// when `DIR/worktodo-n.txt` exists.
pub fn devices_with_work(dir: &Path, count: usize) -> Vec<usize> {
    let shared = dir.join(super::WORKTODO).exists();
    (0..count).filter(|n| shared || dir.join(format!("worktodo-{n}.txt")).exists()).collect()
}

/// The command line `args` (without the program name) less its `--devices X` / `--devices=X`.
pub fn without_devices(args: &[OsString]) -> Vec<OsString> {
    let mut out = Vec::with_capacity(args.len());
    let mut skip = false;
    for a in args {
        if std::mem::take(&mut skip) {
            continue;
        }
        match a.to_str() {
            Some("--devices") => skip = true,
            Some(s) if s.starts_with("--devices=") => {}
            _ => out.push(a.clone()),
        }
    }
    out
}

/// Run `exe args --device n` for each device n with work, in parallel, and return the exit
/// status for the parent.
pub fn run_workers(exe: &Path, dir: &Path, count: usize, args: &[OsString]) -> Result<i32> {
    let devices = devices_with_work(dir, count);
    if devices.is_empty() {
        bail!(
            "--devices: {count} GPU(s) but neither worktodo.txt nor a worktodo-N.txt in {}: put the lines that any GPU may take in worktodo.txt, GPU n's own in worktodo-n.txt (n from 0 to {})",
            dir.display(),
            count.saturating_sub(1)
        );
    }
    if devices.len() < count {
        eprintln!(
            "note: {} of {count} GPUs have a worktodo-N.txt and there is no shared worktodo.txt; the others stay idle",
            devices.len()
        );
    }
    let mut children = Vec::new();
    for &n in &devices {
        let child = Command::new(exe)
            .args(args)
            .arg("--device")
            .arg(n.to_string())
            .spawn()
            .with_context(|| format!("cannot start the worker for GPU {n}"))?;
        children.push((n, child));
    }
    let mut worst = 0;
    for (n, mut child) in children {
        let status = child.wait().with_context(|| format!("waiting for the worker of GPU {n}"))?;
        let code = status.code().unwrap_or(1);
        if code != 0 {
            eprintln!("worker {n} (GPU {n}) exited with status {code}");
        }
        worst = match (worst, code) {
            (1, _) | (_, 1) => 1,
            (0, c) | (c, 0) => c,
            (w, _) => w,
        };
    }
    Ok(worst)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_children_get_everything_but_devices() {
        let args = os(&["--work-dir", "w", "--devices", "all", "--user", "u", "--devices=2", "--engine", "gpu"]);
        assert_eq!(without_devices(&args), os(&["--work-dir", "w", "--user", "u", "--engine", "gpu"]));
    }

    #[test]
    fn devices_with_a_worktodo_file_or_a_shared_one_work() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("worktodo-0.txt"), "").unwrap();
        std::fs::write(dir.path().join("worktodo-2.txt"), "").unwrap();
        std::fs::write(dir.path().join("worktodo-5.txt"), "").unwrap();
        assert_eq!(devices_with_work(dir.path(), 4), vec![0, 2]);
        let err = run_workers(Path::new("/bin/true"), dir.path(), 0, &[]).unwrap_err().to_string();
        assert!(err.contains("nor a worktodo-N.txt"), "{err}");
        std::fs::write(dir.path().join("worktodo.txt"), "").unwrap();
        assert_eq!(devices_with_work(dir.path(), 4), vec![0, 1, 2, 3]);
    }

    #[test]
    fn the_parent_exits_with_the_worst_status() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("worktodo-0.txt"), "").unwrap();
        std::fs::write(dir.path().join("worktodo-1.txt"), "").unwrap();
        // `sh -c SCRIPT sh --device n`: GPU 0 ends well, GPU 1 is interrupted.
        let script = os(&["-c", "if [ \"$2\" = 0 ]; then exit 0; else exit 130; fi", "sh"]);
        assert_eq!(run_workers(Path::new("/bin/sh"), dir.path(), 2, &script).unwrap(), 130);
        let script = os(&["-c", "exit 1", "sh"]);
        assert_eq!(run_workers(Path::new("/bin/sh"), dir.path(), 2, &script).unwrap(), 1);
    }
}
