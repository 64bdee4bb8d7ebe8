//! `results.json.txt`: result lines appended durably (one write, then fsync) and, on restart,
//! the results already there, recognised by assignment id, exponent and work type, so that a
//! kill between appending a result and removing its worktodo line neither loses the result nor
//! runs the test again.

use super::worktodo::Assignment;
use serde_json::Value;
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// What identifies a result: (assignment id, exponent, work type "LL" / "PRP-3").
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResultKey {
    pub aid: Option<String>,
    pub p: u32,
    pub worktype: String,
}

impl ResultKey {
    pub fn of_assignment(a: &Assignment) -> Self {
        ResultKey { aid: a.aid.clone(), p: a.p, worktype: a.kind.worktype().into() }
    }

    /// The key of a result line, if it is one of ours in the shape written by
    /// [`crate::run::report::result_line`].
    pub fn of_line(v: &Value) -> Option<Self> {
        Some(ResultKey {
            aid: v.get("aid").and_then(Value::as_str).map(str::to_ascii_uppercase),
            p: u32::try_from(v.get("exponent")?.as_u64()?).ok()?,
            worktype: v.get("worktype")?.as_str()?.to_string(),
        })
    }
}

/// The results file of a work directory.
#[derive(Debug, Clone)]
pub struct ResultsFile {
    path: PathBuf,
}

impl ResultsFile {
    pub fn new(path: &Path) -> Self {
        ResultsFile { path: path.to_path_buf() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The keys of the complete result lines in the file (a torn last line, from a crash during
    /// the write, or a line of another program is not a result of ours and is skipped).
    pub fn keys(&self) -> io::Result<HashSet<ResultKey>> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(HashSet::new()),
            Err(e) => return Err(e),
        };
        Ok(text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| ResultKey::of_line(&v))
            .collect())
    }

    /// Append `line` as one line with a single write, and fsync the file (and its directory when
    /// the file is new) before returning. A last line left without its end by a crash is ended
    /// first, so that the new line stands alone.
    pub fn append(&self, line: &Value) -> io::Result<()> {
        let created = !self.path.exists();
        let mut f = OpenOptions::new().create(true).read(true).append(true).open(&self.path)?;
        let mut text = String::new();
        if !ends_with_newline(&mut f)? {
            text.push('\n');
        }
        text.push_str(&line.to_string());
        text.push('\n');
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        if created {
            let dir = self.path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
            File::open(dir)?.sync_all()?;
        }
        Ok(())
    }
}

/// Whether the file is empty or ends with '\n'.
fn ends_with_newline(f: &mut File) -> io::Result<bool> {
    let len = f.metadata()?.len();
    if len == 0 {
        return Ok(true);
    }
    f.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    f.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exponent::TestKind;
    use serde_json::json;

    #[test]
    fn appended_lines_are_found_again_and_a_torn_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let results = ResultsFile::new(&dir.path().join("results.json.txt"));
        assert!(results.keys().unwrap().is_empty());
        results.append(&json!({"exponent": 9689, "worktype": "LL", "aid": "ab12", "res64": "0"})).unwrap();
        // A crash in the middle of a write, then a line of another program.
        std::fs::OpenOptions::new()
            .append(true)
            .open(results.path())
            .unwrap()
            .write_all(b"{\"exponent\":4423,\"worktype\"")
            .unwrap();
        results.append(&json!({"exponent": 4423, "worktype": "PRP-3"})).unwrap();
        let text = std::fs::read_to_string(results.path()).unwrap();
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(text.ends_with("\"worktype\":\"PRP-3\"}\n"), "{text}");
        let keys = results.keys().unwrap();
        let key = |aid: Option<&str>, p, w: &str| ResultKey { aid: aid.map(Into::into), p, worktype: w.into() };
        assert_eq!(keys, HashSet::from([key(Some("AB12"), 9689, "LL"), key(None, 4423, "PRP-3")]));
        let a = Assignment { kind: TestKind::Prp, p: 4423, aid: None, line: String::new() };
        assert!(keys.contains(&ResultKey::of_assignment(&a)));
        let a = Assignment { kind: TestKind::Ll, p: 4423, aid: None, line: String::new() };
        assert!(!keys.contains(&ResultKey::of_assignment(&a)));
    }
}
