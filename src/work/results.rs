//! `results.json.txt`: result lines appended durably (one write, then fsync) and, on restart,
//! the results of ours already there, so that a kill between appending a result and removing its
//! worktodo line neither loses the result nor runs the test again. A line counts as done only by
//! a result line of this program for the same exponent and work type that carries the same
//! assignment id, or, for a line without one, that was written for the same line (its
//! `mersenne-cert.worktodo` key): a double check is a new test, and another program's result is
//! not ours.

use super::worktodo::Assignment;
use crate::run::report::PROGRAM_NAME;
use serde_json::Value;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// A result of ours in the file: (assignment id, exponent, work type, the worktodo line's key).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Done {
    pub aid: Option<String>,
    pub p: u32,
    pub worktype: String,
    /// [`Assignment::key`] of the line it was written for (absent in lines of older versions).
    pub key: Option<String>,
    /// The blake3 of its certificate.
    pub certificate: Option<String>,
}

impl Done {
    /// The result of a line, if it is one of ours in the shape written by
    /// [`crate::run::report::result_line`].
    pub fn of_line(v: &Value) -> Option<Self> {
        if v.get("program")?.get("name")?.as_str()? != PROGRAM_NAME {
            return None;
        }
        let ours = v.get(PROGRAM_NAME);
        let text = |o: Option<&Value>| o.and_then(Value::as_str).map(String::from);
        Some(Done {
            aid: v.get("aid").and_then(Value::as_str).map(str::to_ascii_uppercase),
            p: u32::try_from(v.get("exponent")?.as_u64()?).ok()?,
            worktype: v.get("worktype")?.as_str()?.to_string(),
            key: text(ours.and_then(|o| o.get("worktodo"))),
            certificate: text(ours.and_then(|o| o.get("certificate")).and_then(|c| c.get("blake3"))),
        })
    }

    /// Whether this result is the one of assignment `a`: same exponent and work type, and the
    /// same id, or no id and the same line (also when the line was given an id after the result
    /// was written).
    pub fn is_for(&self, a: &Assignment) -> bool {
        if self.p != a.p || self.worktype != a.kind.worktype() {
            return false;
        }
        match (&self.aid, &a.aid) {
            (Some(mine), Some(theirs)) => mine == theirs,
            (None, _) => self.key.as_deref() == Some(a.key.as_str()),
            (Some(_), None) => false,
        }
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

    /// The results of ours in the file (a torn last line, from a crash during the write, or a
    /// line of another program is not a result of ours and is skipped).
    pub fn done(&self) -> io::Result<Vec<Done>> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        Ok(text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| Done::of_line(&v))
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
    use crate::work::worktodo::{parse_line, Line};
    use serde_json::json;

    fn ours(fields: Value) -> Value {
        let mut v = json!({"program": {"name": PROGRAM_NAME, "version": "0"}});
        v.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        v
    }

    fn line(text: &str) -> Assignment {
        match parse_line(text) {
            Line::Work(a) => a,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn appended_lines_are_found_again_and_a_torn_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let results = ResultsFile::new(&dir.path().join("results.json.txt"));
        assert!(results.done().unwrap().is_empty());
        results.append(&ours(json!({"exponent": 9689, "worktype": "LL", "aid": "ab12", "res64": "0"}))).unwrap();
        // A crash in the middle of a write, then a line of another program.
        std::fs::OpenOptions::new()
            .append(true)
            .open(results.path())
            .unwrap()
            .write_all(b"{\"exponent\":4423,\"worktype\"")
            .unwrap();
        results.append(&json!({"exponent": 3217, "worktype": "LL", "program": {"name": "prpll"}})).unwrap();
        let key = json!({"worktodo": "prp=1,2,4423,-1", "certificate": {"blake3": "c0"}});
        results.append(&ours(json!({"exponent": 4423, "worktype": "PRP-3", PROGRAM_NAME: key}))).unwrap();
        let text = std::fs::read_to_string(results.path()).unwrap();
        assert_eq!(text.lines().count(), 4, "{text}");
        let done = results.done().unwrap();
        assert_eq!(done.len(), 2, "another program's line is not ours: {done:?}");
        assert_eq!(done[0].aid.as_deref(), Some("AB12"));
        assert_eq!(done[1].certificate.as_deref(), Some("c0"));
        let is_done = |text: &str| done.iter().any(|d| d.is_for(&line(text)));
        assert!(is_done("PRP=1,2,4423,-1"));
        assert!(is_done("PRP=N/A,1,2,4423,-1"));
        assert!(is_done("PRP=0123456789ABCDEF0123456789ABCDEF,1,2,4423,-1"), "given an id after the result");
        assert!(!is_done("PRPDC=1,2,4423,-1"), "a double check is a new test");
        assert!(!is_done("PRP=1,2,4423,-1,75,0"));
        assert!(!is_done("Test=4423"));
        assert!(!is_done("DoubleCheck=3217"), "another program's result does not count");
        assert!(!is_done("Test=9689"), "no id: not the line of the result with one");
        let a = Assignment { kind: TestKind::Ll, aid: Some("AB12".into()), ..line("Test=9689") };
        assert!(done[0].is_for(&a));
    }
}
