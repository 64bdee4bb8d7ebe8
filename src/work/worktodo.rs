//! worktodo.txt lines as prime95/mprime and PRPLL write them, parsed into assignments this
//! program can run, or a one-line reason why a line is left alone.
//!
//! Accepted (keywords case-insensitive, fields comma-separated, `aid` a 32-hex-digit PrimeNet
//! assignment id, `N/A`, or absent):
//! - `Test=[aid,]p[,how_far_factored,has_been_pminus1ed]`, `DoubleCheck=` the same: an LL test;
//! - `PRP=[aid,]k,b,n,c[,how_far_factored,tests_saved[,base,residue_type]][,"factors"]`, `PRPDC=`
//!   the same: a PRP test, for k = 1, b = 2, c = −1 (a Mersenne number), base 3 and residue type 1
//!   or 5 (type 5 is type 1 when no factors are known, and none may be).
//!
//! Blank lines, comments (`#`, `;`, `//`) and prime95's `[Worker #n]` headers are not work.

use crate::exponent::{validate_exponent, TestKind};
use std::path::Path;

/// The lines of the worktodo file at `path` (none when it does not exist).
pub fn read_lines(path: &Path) -> std::io::Result<Vec<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text.lines().map(|l| l.trim_end_matches('\r').to_string()).collect()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// Remove the first line equal to `line` from the file at `path`, durably (the file is read again
/// and replaced atomically, so lines added meanwhile by another program stay). Returns whether
/// such a line was there.
pub fn remove_line(path: &Path, line: &str) -> std::io::Result<bool> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    let mut kept = String::with_capacity(text.len());
    let mut removed = false;
    for l in text.split_inclusive('\n') {
        if !removed && l.trim_end_matches(['\r', '\n']) == line {
            removed = true;
        } else {
            kept.push_str(l);
        }
    }
    if removed {
        crate::fsutil::write_atomic(path, kept.as_bytes(), 0o644)?;
    }
    Ok(removed)
}

/// One test to run, from one worktodo line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    pub kind: TestKind,
    pub p: u32,
    /// The assignment id, upper-case; None for `N/A` or none.
    pub aid: Option<String>,
    /// The line as it stands in the file (without its line end).
    pub line: String,
}

/// What a worktodo line is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// Nothing to do (blank, comment, section header).
    Ignored,
    Work(Assignment),
    /// Left in the file untouched; the reason, for a one-line warning.
    Unusable(String),
}

/// Parse one line of a worktodo file.
pub fn parse_line(raw: &str) -> Line {
    let line = raw.trim();
    if line.is_empty() || line.starts_with('#') || line.starts_with(';') || line.starts_with("//") {
        return Line::Ignored;
    }
    if line.starts_with('[') && line.ends_with(']') {
        return Line::Ignored;
    }
    match parse_work(line) {
        Ok((kind, p, aid)) => Line::Work(Assignment { kind, p, aid, line: raw.trim_end_matches(['\r', '\n']).into() }),
        Err(why) => Line::Unusable(why),
    }
}

fn parse_work(line: &str) -> Result<(TestKind, u32, Option<String>), String> {
    let (key, rest) = line.split_once('=').ok_or("not a 'Worktype=...' line")?;
    let key = key.trim().to_ascii_lowercase();
    // A quoted list of known factors may follow the numbers (PRP cofactor tests).
    let (numbers, factors) = match rest.find('"') {
        Some(i) => (rest[..i].trim_end().trim_end_matches(','), Some(rest[i..].trim())),
        None => (rest, None),
    };
    let mut fields: Vec<&str> = numbers.split(',').map(str::trim).collect();
    let aid = match fields.first() {
        Some(f) if f.eq_ignore_ascii_case("N/A") => {
            fields.remove(0);
            None
        }
        Some(f) if f.len() == 32 && f.bytes().all(|b| b.is_ascii_hexdigit()) => {
            let aid = f.to_ascii_uppercase();
            fields.remove(0);
            Some(aid)
        }
        _ => None,
    };
    match key.as_str() {
        "test" | "doublecheck" => {
            if factors.is_some() {
                return Err("an LL line has no list of factors".into());
            }
            if fields.len() != 1 && fields.len() != 3 {
                return Err(format!(
                    "expected [aid,]exponent[,how_far_factored,has_been_pminus1ed], got {} fields",
                    fields.len()
                ));
            }
            integer::<u32>(fields[1..].iter().copied(), "how_far_factored / has_been_pminus1ed")?;
            Ok((TestKind::Ll, exponent(fields[0])?, aid))
        }
        "prp" | "prpdc" => {
            if ![4, 6, 8].contains(&fields.len()) {
                return Err(format!(
                    "expected [aid,]k,b,n,c[,how_far_factored,tests_saved[,base,residue_type]], got {} fields",
                    fields.len()
                ));
            }
            let kbc: Vec<i64> = integer(fields[..4].iter().copied(), "k,b,n,c")?;
            if (kbc[0], kbc[1], kbc[3]) != (1, 2, -1) {
                return Err(format!(
                    "{}*{}^{}{:+} is not a Mersenne number (only k=1, b=2, c=-1 are tested)",
                    kbc[0], kbc[1], fields[2], kbc[3]
                ));
            }
            if fields.len() >= 6 {
                integer::<u32>(fields[4..5].iter().copied(), "how_far_factored")?;
                fields[5].parse::<f64>().map_err(|_| format!("tests_saved '{}' is not a number", fields[5]))?;
            }
            if fields.len() == 8 {
                let bt: Vec<u32> = integer(fields[6..8].iter().copied(), "base,residue_type")?;
                if bt[0] != 3 {
                    return Err(format!("PRP base {} is not supported (only base 3)", bt[0]));
                }
                if bt[1] != 1 && bt[1] != 5 {
                    return Err(format!(
                        "residue type {} is not supported (only 1, and 5 without known factors)",
                        bt[1]
                    ));
                }
            }
            if factors.is_some() {
                return Err("PRP of a cofactor (known factors) is not supported".into());
            }
            Ok((TestKind::Prp, exponent(fields[2])?, aid))
        }
        _ => Err(format!("work type '{}' is not supported (only Test, DoubleCheck, PRP, PRPDC)", key)),
    }
}

fn integer<'a, T: std::str::FromStr>(fields: impl Iterator<Item = &'a str>, what: &str) -> Result<Vec<T>, String> {
    fields.map(|f| f.parse::<T>().map_err(|_| format!("{what}: '{f}' is not an integer"))).collect()
}

fn exponent(field: &str) -> Result<u32, String> {
    let n: u64 = field.parse().map_err(|_| format!("exponent '{field}' is not a number"))?;
    validate_exponent(n).map_err(|e| e.to_string()).and_then(|p| match p {
        2 => Err("M2 = 3 is prime by inspection; there is no test to run".into()),
        p => Ok(p),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const AID: &str = "0123456789ABCDEF0123456789abcdef";

    fn work(line: &str) -> (TestKind, u32, Option<String>) {
        match parse_line(line) {
            Line::Work(a) => (a.kind, a.p, a.aid),
            other => panic!("{line}: {other:?}"),
        }
    }

    fn unusable(line: &str) -> String {
        match parse_line(line) {
            Line::Unusable(why) => why,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn every_accepted_form() {
        let upper = Some(AID.to_ascii_uppercase());
        assert_eq!(work(&format!("PRP={AID},1,2,77936923,-1,75,0")), (TestKind::Prp, 77936923, upper.clone()));
        assert_eq!(work(&format!("PRPDC={AID},1,2,9689,-1,75,0.5,3,1")), (TestKind::Prp, 9689, upper.clone()));
        assert_eq!(work("PRP=N/A,1,2,9689,-1,75,0,3,5"), (TestKind::Prp, 9689, None));
        assert_eq!(work("PRP=1,2,9689,-1"), (TestKind::Prp, 9689, None));
        assert_eq!(work(&format!("Test={AID},77936923,75,1")), (TestKind::Ll, 77936923, upper.clone()));
        assert_eq!(work(&format!("DoubleCheck={AID},9689,68,0")), (TestKind::Ll, 9689, upper));
        assert_eq!(work("doublecheck=N/A,4423"), (TestKind::Ll, 4423, None));
        assert_eq!(work("  Test=4423,60,1  \r"), (TestKind::Ll, 4423, None));
        match parse_line("Test=4423,60,1\r") {
            Line::Work(a) => assert_eq!(a.line, "Test=4423,60,1"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn not_work() {
        for line in ["", "   ", "# a comment", "; prime95 comment", "// note", "[Worker #1]"] {
            assert_eq!(parse_line(line), Line::Ignored, "{line:?}");
        }
    }

    #[test]
    fn unusable_lines_say_why() {
        for (line, needle) in [
            ("PRP=1,2,9689", "got 3 fields"),
            ("PRP=3,2,9689,-1", "not a Mersenne number"),
            ("PRP=1,2,9689,1,75,0", "not a Mersenne number"),
            ("PRP=1,10,9689,-1", "not a Mersenne number"),
            ("PRP=1,2,9689,-1,75,0,5,1", "base 5"),
            ("PRP=1,2,9689,-1,75,0,3,4", "residue type 4"),
            ("PRP=1,2,9689,-1,75,0,3,5,\"12345\"", "known factors"),
            ("PRP=1,2,9687,-1", "not prime"),
            ("PRP=1,2,x,-1", "not an integer"),
            ("PRP=1,2,9689,-1,75,zero", "tests_saved"),
            ("Test=9689,75", "got 2 fields"),
            ("Test=9689,seventy,1", "not an integer"),
            ("Test=2", "M2 = 3"),
            ("Test=4000000007", "larger than"),
            ("Pminus1=N/A,1,2,9689,-1,1000,100000", "'pminus1' is not supported"),
            ("Factor=N/A,9689,60,70", "not supported"),
            ("9689", "not a 'Worktype=...' line"),
            ("garbage", "not a 'Worktype=...' line"),
            ("Test=0123456789ABCDEF0123456789ABCDEX,9689,75,1", "got 4 fields"),
        ] {
            let why = unusable(line);
            assert!(why.contains(needle), "{line}: {why}");
        }
    }

    #[test]
    fn removing_a_line_keeps_the_others_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("worktodo.txt");
        std::fs::write(&path, "Test=9689\r\nPRP=1,2,4423,-1\nTest=9689\r\nlast without end").unwrap();
        assert!(remove_line(&path, "Test=9689").unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "PRP=1,2,4423,-1\nTest=9689\r\nlast without end");
        assert!(remove_line(&path, "last without end").unwrap());
        assert!(!remove_line(&path, "Test=4423").unwrap());
        assert_eq!(read_lines(&path).unwrap(), ["PRP=1,2,4423,-1", "Test=9689"]);
        assert!(read_lines(&dir.path().join("none.txt")).unwrap().is_empty());
        assert!(!remove_line(&dir.path().join("none.txt"), "x").unwrap());
    }

    quickcheck::quickcheck! {
        fn never_panics(s: String) -> bool {
            let _ = parse_line(&s);
            true
        }

        fn prp_lines_round_trip(n: u32, aid: bool) -> bool {
            let p = (n % 200_000).max(3);
            let line = format!("PRP={}1,2,{p},-1,70,0", if aid { format!("{AID},") } else { String::new() });
            match parse_line(&line) {
                Line::Work(a) => crate::exponent::is_prime(p as u64) && a.p == p && a.aid.is_some() == aid,
                Line::Unusable(why) => !crate::exponent::is_prime(p as u64) && why.contains("not prime"),
                Line::Ignored => false,
            }
        }
    }
}
