//! worktodo.txt lines as prime95/mprime and PRPLL write them, parsed into assignments this
//! program can run, or a one-line reason why a line is left alone.
//!
//! Accepted (keywords case-insensitive, fields comma-separated, `aid` a 32-hex-digit PrimeNet
//! assignment id, `N/A`, `0` (AutoPrimeNet's "none"), or absent; an optional `B1=…[,B2=…];` or
//! `B2=…;` prefix, AutoPrimeNet's P-1 bounds, is accepted and ignored with a note: this program
//! does no P-1):
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
/// and replaced atomically, so lines added meanwhile by another program stay), under
/// AutoPrimeNet's lock of the file ([`super::apn_lock`]). Returns whether such a line was there.
pub fn remove_line(path: &Path, line: &str) -> std::io::Result<bool> {
    let _apn = super::apn_lock::ApnLock::take(path)?;
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
    /// The line without its assignment id and bounds prefix (keyword lower-case): what stays the
    /// same when AutoPrimeNet gives an id-less line an id.
    pub key: String,
    /// Something about the line worth a one-time note (ignored P-1 bounds).
    pub note: Option<String>,
}

impl Assignment {
    /// Whether `other` (a line read again later) is this assignment: the same line, or the same
    /// line given an assignment id since (AutoPrimeNet's `register_assignments`).
    pub fn same_as(&self, other: &Assignment) -> bool {
        self.line == other.line || (self.key == other.key && (self.aid.is_none() || self.aid == other.aid))
    }
}

/// The line of the worktodo file at `path` that assignment `a` is now: the same line if it is
/// still there, else the first that is `a` given an id meanwhile ([`Assignment::same_as`]).
pub fn find_current(path: &Path, a: &Assignment) -> std::io::Result<Option<Assignment>> {
    let work: Vec<Assignment> = read_lines(path)?
        .iter()
        .filter_map(|l| match parse_line(l) {
            Line::Work(w) => Some(w),
            _ => None,
        })
        .collect();
    Ok(work.iter().find(|w| w.line == a.line).or_else(|| work.iter().find(|w| a.same_as(w))).cloned())
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
    let (bounds, line) = match line.split_once(';') {
        Some((b, rest)) if is_bounds(b) => (Some(b.trim()), rest.trim()),
        _ => (None, line),
    };
    match parse_work(line) {
        Ok((kind, p, aid, key)) => Line::Work(Assignment {
            kind,
            p,
            aid,
            line: raw.trim_end_matches(['\r', '\n']).into(),
            key,
            note: bounds.map(|b| format!("P-1 bounds '{b}' ignored: this program does no P-1, only the test")),
        }),
        Err(why) => Line::Unusable(why),
    }
}

/// AutoPrimeNet's P-1 bounds prefix: `B1=n`, `B1=n,B2=m` or `B2=m`.
fn is_bounds(prefix: &str) -> bool {
    let bound = |s: &str, name: &str| {
        s.trim().strip_prefix(name).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    match prefix.split_once(',') {
        Some((b1, b2)) => bound(b1, "B1=") && bound(b2, "B2="),
        None => bound(prefix, "B1=") || bound(prefix, "B2="),
    }
}

/// (kind, exponent, assignment id, the line's key: see [`Assignment::key`]).
type Parsed = (TestKind, u32, Option<String>, String);

fn parse_work(line: &str) -> Result<Parsed, String> {
    let (key, rest) = line.split_once('=').ok_or("not a 'Worktype=...' line")?;
    let key = key.trim().to_ascii_lowercase();
    // A quoted list of known factors may follow the numbers (PRP cofactor tests).
    let (numbers, factors) = match rest.find('"') {
        Some(i) => (rest[..i].trim_end().trim_end_matches(','), Some(rest[i..].trim())),
        None => (rest, None),
    };
    let mut fields: Vec<&str> = numbers.split(',').map(str::trim).collect();
    let aid = match fields.first() {
        // "0" is AutoPrimeNet's "no id" (in its own regular expressions, beside N/A).
        Some(f) if f.eq_ignore_ascii_case("N/A") || (*f == "0" && fields.len() > 1) => {
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
    let line_key = match factors {
        Some(f) => format!("{key}={},{f}", fields.join(",")),
        None => format!("{key}={}", fields.join(",")),
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
            Ok((TestKind::Ll, exponent(fields[0])?, aid, line_key))
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
            Ok((TestKind::Prp, exponent(fields[2])?, aid, line_key))
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

    fn assignment(line: &str) -> Assignment {
        match parse_line(line) {
            Line::Work(a) => a,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn autoprimenet_forms_aid_zero_and_bounds_prefixes() {
        let upper = Some(AID.to_ascii_uppercase());
        assert_eq!(work("PRP=0,1,2,4423,-1,75,0"), (TestKind::Prp, 4423, None));
        assert_eq!(work("Test=0,4253"), (TestKind::Ll, 4253, None));
        assert_eq!(work("DoubleCheck=0,4253,70,1"), (TestKind::Ll, 4253, None));
        for prefix in ["B1=10,B2=100;", "B1=50000;", "B2=100;", " B1=10 , B2=100 ; "] {
            let a = assignment(&format!("{prefix}PRP={AID},1,2,4423,-1,75,0"));
            assert_eq!((a.kind, a.p, &a.aid), (TestKind::Prp, 4423, &upper), "{prefix}");
            assert!(a.note.as_deref().is_some_and(|n| n.contains("ignored")), "{prefix}");
        }
        assert!(assignment("PRP=N/A,1,2,4423,-1,75,0").note.is_none());
        for bad in ["B1=;PRP=1,2,4423,-1", "B3=10;PRP=1,2,4423,-1", "B1=x;Test=4423", "B1=10,B1=10;Test=4423"] {
            assert!(matches!(parse_line(bad), Line::Unusable(_)), "{bad}");
        }
    }

    #[test]
    fn a_line_given_an_id_is_the_same_assignment_and_a_double_check_is_not() {
        let plain = assignment("PRP=1,2,86243,-1,75,0");
        let na = assignment("PRP=N/A,1,2,86243,-1,75,0");
        let zero = assignment("PRP=0,1,2,86243,-1,75,0");
        let with_id = assignment(&format!("PRP={AID},1,2,86243,-1,75,0"));
        let bounds = assignment(&format!("B1=10,B2=100;PRP={AID},1,2,86243,-1,75,0"));
        for a in [&plain, &na, &zero] {
            assert!(a.same_as(&with_id) && a.same_as(&bounds), "{}", a.line);
            assert!(!with_id.same_as(a), "an id never goes away: {}", a.line);
        }
        assert!(with_id.same_as(&bounds));
        let other_id = assignment("PRP=FEDCBA9876543210FEDCBA9876543210,1,2,86243,-1,75,0");
        assert!(!with_id.same_as(&other_id));
        assert!(!plain.same_as(&assignment("PRPDC=1,2,86243,-1,75,0")));
        assert!(!plain.same_as(&assignment("PRP=1,2,86243,-1,76,0")));
        assert!(!assignment("Test=3217").same_as(&assignment("DoubleCheck=3217")));

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("worktodo.txt");
        std::fs::write(&path, format!("Test=4423\nB1=10;PRP={AID},1,2,86243,-1,75,0\n")).unwrap();
        assert_eq!(find_current(&path, &plain).unwrap().unwrap().line, format!("B1=10;PRP={AID},1,2,86243,-1,75,0"));
        assert!(find_current(&path, &other_id).unwrap().is_none());
        assert_eq!(find_current(&path, &assignment("Test=4423")).unwrap().unwrap().line, "Test=4423");
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
            ("Test=0", "exponent"),
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
