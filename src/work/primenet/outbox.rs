//! The queue of unsent results: `results.json.txt` is the durable record of every result (each
//! line appended and fsynced before anything is sent), and `primenet-sent.txt` the record of
//! those PrimeNet has answered (one JSON line per result, `{"blake3", "exponent", "aid",
//! "outcome"}`, appended and fsynced after the answer). The unsent lines are our result lines
//! whose certificate blake3 is not in the record.
//!
//! Marking after the answer, not before: a kill between the server's answer and the mark sends
//! that line once more on restart, never zero times. PrimeNet recognises a second report of an
//! assignment by its id (it answers "invalid assignment key", which is taken as done), so a
//! result with an id is counted once; a result without one could be reported twice in that
//! window (docs/gimps.md).

use crate::run::report::PROGRAM_NAME;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};

pub const SENT_FILE: &str = "primenet-sent.txt";

/// The outbox of a work directory.
#[derive(Debug, Clone)]
pub struct Outbox {
    results: PathBuf,
    sent: PathBuf,
}

/// The certificate blake3 of one of our result lines: the line's identity.
pub fn line_id(line: &Value) -> Option<&str> {
    line.get(PROGRAM_NAME)?.get("certificate")?.get("blake3")?.as_str()
}

fn json_lines(path: &Path) -> io::Result<Vec<Value>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

impl Outbox {
    pub fn new(dir: &Path) -> Outbox {
        Outbox { results: dir.join(super::super::RESULTS), sent: dir.join(SENT_FILE) }
    }

    /// The ids PrimeNet has answered, with the outcome recorded for each.
    pub fn answered(&self) -> io::Result<Vec<(String, String)>> {
        Ok(json_lines(&self.sent)?
            .iter()
            .filter_map(|v| Some((v["blake3"].as_str()?.to_string(), v["outcome"].as_str().unwrap_or("").to_string())))
            .collect())
    }

    /// Our result lines not yet answered, in the order they were written.
    pub fn pending(&self) -> io::Result<Vec<Value>> {
        let done: HashSet<String> = self.answered()?.into_iter().map(|(id, _)| id).collect();
        Ok(json_lines(&self.results)?
            .into_iter()
            .filter(|v| v["program"]["name"] == PROGRAM_NAME)
            .filter(|v| line_id(v).is_some_and(|id| !done.contains(id)))
            .collect())
    }

    /// Record that `line` was answered (`outcome`: "accepted", "rejected: …", "withheld: …").
    pub fn mark(&self, line: &Value, outcome: &str) -> io::Result<()> {
        let record = json!({
            "blake3": line_id(line).unwrap_or_default(),
            "exponent": line["exponent"],
            "aid": line.get("aid").cloned().unwrap_or(Value::Null),
            "outcome": outcome,
        });
        crate::fsutil::append_line(&self.sent, &record.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours(p: u32, id: &str) -> Value {
        json!({"exponent": p, "program": {"name": PROGRAM_NAME}, PROGRAM_NAME: {"certificate": {"blake3": id}}})
    }

    #[test]
    fn pending_is_our_lines_less_the_answered_ones() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let results = crate::work::results::ResultsFile::new(&d.join(crate::work::RESULTS));
        let outbox = Outbox::new(d);
        assert!(outbox.pending().unwrap().is_empty());
        results.append(&ours(9689, "a")).unwrap();
        results.append(&json!({"exponent": 3217, "program": {"name": "prpll"}})).unwrap();
        results.append(&ours(4423, "b")).unwrap();
        assert_eq!(outbox.pending().unwrap(), [ours(9689, "a"), ours(4423, "b")]);
        outbox.mark(&ours(9689, "a"), "accepted").unwrap();
        assert_eq!(outbox.pending().unwrap(), [ours(4423, "b")]);
        outbox.mark(&ours(4423, "b"), "rejected: 43").unwrap();
        assert!(outbox.pending().unwrap().is_empty());
        assert_eq!(outbox.answered().unwrap()[1], ("b".to_string(), "rejected: 43".to_string()));
    }
}
