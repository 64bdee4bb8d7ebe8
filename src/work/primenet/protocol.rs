//! PrimeNet's v5 API as prime95/mprime and AutoPrimeNet speak it (facts from autoprimenet.py and
//! prime95's primenet.h; no code taken): a GET of `v5server/?px=GIMPS&v=0.95&t=<transaction>&...`
//! answered by `key=value` lines up to `==END==`, `pnErrorResult` (0 = ok, else a code below) and
//! `pnErrorDetail` among them.
//!
//! The security fields `ss`/`sh`: prime95 hashes the query with a key derived from the computer's
//! GUID and its trusted-client constant; every other client (Mlucas's primenet.py, AutoPrimeNet
//! for GPU programs) sends the fixed `ss=19191919&sh=ABCDABCDABCDABCDABCDABCDABCDABCD`, and so do
//! we: the hash would claim prime95's identity.
//!
//! Here: the requests (`uc` update computer, `po` program options, `ga` get assignment, `ap`
//! progress, `ar` result, `au` unreserve) as parameter lists, the response parser, the error
//! codes, and the two translations: an assignment (`ga`'s answer) into a worktodo line, and a
//! result line of ours into `ar`'s parameters.

use serde_json::Value;
use std::collections::BTreeMap;

pub const API_VERSION: &str = "0.95";
/// The security fields every client but prime95 sends.
pub const UNSECURED_SS: &str = "19191919";
pub const UNSECURED_SH: &str = "ABCDABCDABCDABCDABCDABCDABCDABCD";

/// PrimeNet's error codes (`pnErrorResult`), as primenet.h names them.
pub mod code {
    pub const OK: u32 = 0;
    pub const SERVER_BUSY: u32 = 3;
    pub const INVALID_PARAMETER: u32 = 7;
    pub const UNREGISTERED_CPU: u32 = 30;
    pub const STALE_CPU_INFO: u32 = 32;
    pub const NO_ASSIGNMENT: u32 = 40;
    pub const INVALID_ASSIGNMENT_KEY: u32 = 43;
    pub const WORK_NO_LONGER_NEEDED: u32 = 47;
}

/// A code's name, for messages.
pub fn code_name(c: u32) -> &'static str {
    match c {
        0 => "ok",
        3 => "server busy",
        4 => "invalid version",
        5 => "invalid transaction",
        7 => "invalid parameter",
        9 => "access denied",
        11 => "server database malfunction",
        13 => "server database full or broken",
        21 => "invalid user",
        30 => "computer not registered",
        31 => "obsolete client",
        32 => "stale computer info",
        33 => "computer identity mismatch",
        34 => "computer configuration mismatch",
        40 => "no assignment",
        43 => "invalid assignment key",
        44 => "invalid assignment type",
        45 => "invalid result type",
        46 => "invalid work type",
        47 => "work no longer needed",
        48 => "invalid residue",
        _ => "unknown error code",
    }
}

/// Work preferences (`po`'s `w`) this program can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkPref {
    /// 150: first-time PRP tests.
    Prp,
    /// 151: PRP double checks.
    PrpDc,
    /// 101: LL double checks.
    LlDc,
}

impl WorkPref {
    pub fn number(self) -> u32 {
        match self {
            WorkPref::Prp => 150,
            WorkPref::PrpDc => 151,
            WorkPref::LlDc => 101,
        }
    }
}

/// The query of a transaction: the fixed head, `t`, the computer's GUID, then the rest in order.
pub fn query(t: &str, guid: &str, rest: Vec<(&'static str, String)>) -> Vec<(&'static str, String)> {
    let mut q = vec![("px", "GIMPS".to_string()), ("v", API_VERSION.into()), ("t", t.into()), ("g", guid.into())];
    q.extend(rest);
    q.push(("ss", UNSECURED_SS.into()));
    q.push(("sh", UNSECURED_SH.into()));
    q
}

/// A parsed answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub fields: BTreeMap<String, String>,
}

impl Answer {
    /// Parse `key=value` lines up to `==END==`; an answer without `pnErrorResult` is refused.
    pub fn parse(text: &str) -> Result<Answer, String> {
        let mut fields = BTreeMap::new();
        for line in text.split('\n') {
            let line = line.trim_end_matches('\r');
            if line == "==END==" {
                break;
            }
            if let Some((k, v)) = line.split_once('=') {
                fields.insert(k.to_string(), v.to_string());
            }
        }
        let a = Answer { fields };
        match a.get("pnErrorResult").map(str::trim).map(str::parse::<u32>) {
            Some(Ok(_)) => Ok(a),
            _ => Err(format!(
                "not a PrimeNet answer (no pnErrorResult): {:?}",
                text.chars().take(200).collect::<String>()
            )),
        }
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields.get(key).map(String::as_str)
    }

    pub fn code(&self) -> u32 {
        self.get("pnErrorResult").and_then(|c| c.trim().parse().ok()).unwrap_or(u32::MAX)
    }

    /// "error N (name): detail", for messages.
    pub fn describe(&self) -> String {
        let c = self.code();
        format!("PrimeNet error {c} ({}): {}", code_name(c), self.get("pnErrorDetail").unwrap_or("").trim())
    }
}

/// The worktodo line of an assignment `ga` answered, or why this program cannot run it.
pub fn assignment_line(a: &Answer) -> Result<String, String> {
    let need = |k: &str| a.get(k).map(str::trim).filter(|v| !v.is_empty()).ok_or(format!("assignment without '{k}'"));
    let aid = need("k")?;
    let n = need("n")?;
    let w = need("w")?;
    match w {
        "100" | "101" => {
            let kind = if w == "100" { "Test" } else { "DoubleCheck" };
            Ok(format!("{kind}={aid},{n},{},{}", need("sf")?, need("p1")?))
        }
        "150" => {
            let kind = if a.get("dc").is_some() { "PRPDC" } else { "PRP" };
            let mut line = format!("{kind}={aid},{},{},{n},{}", need("A")?, need("b")?, need("c")?);
            if let (Some(sf), Some(saved)) = (a.get("sf"), a.get("saved")) {
                line += &format!(",{sf},{saved}");
                if let (Some(base), Some(rt)) = (a.get("base"), a.get("rt")) {
                    line += &format!(",{base},{rt}");
                }
            }
            if let Some(kf) = a.get("kf") {
                line += &format!(",\"{kf}\"");
            }
            Ok(line)
        }
        other => Err(format!("work type {other} is not a test this program runs")),
    }
}

/// `ar`'s parameters (after the head) for one of our result lines, as AutoPrimeNet sends a GIMPS
/// program's JSON line: the line itself as `m`, the result type, the residue, shift count, error
/// code, proof power and MD5, transform length.
pub fn result_params(line: &Value) -> Result<Vec<(&'static str, String)>, String> {
    let s = |k: &str| line.get(k).and_then(Value::as_str).ok_or(format!("result line without '{k}'"));
    let n = line.get("exponent").and_then(Value::as_u64).ok_or("result line without 'exponent'")?;
    let prime = s("status")? == "P";
    let worktype = s("worktype")?;
    let mut q: Vec<(&'static str, String)> = vec![("k", s("aid").unwrap_or("0").to_string()), ("m", line.to_string())];
    let number = |k: &str| line.get(k).map(|v| v.to_string()).ok_or(format!("result line without '{k}'"));
    match worktype {
        "LL" => {
            q.extend([("r", if prime { "101" } else { "100" }.into()), ("n", n.to_string()), ("d", "1".into())]);
            if !prime {
                q.push(("rd", s("res64")?.into()));
            }
            q.extend([("sc", number("shift-count")?), ("ec", s("error-code")?.into())]);
        }
        w if w.starts_with("PRP-") => {
            q.extend([("r", if prime { "151" } else { "150" }.into()), ("n", n.to_string()), ("d", "1".into())]);
            q.extend([("A", "1".into()), ("b", "2".into()), ("c", "-1".into())]);
            if !prime {
                q.extend([("rd", s("res64")?.into()), ("rt", number("residue-type")?)]);
            }
            q.extend([("ec", s("error-code")?.into()), ("base", w[4..].into()), ("sc", number("shift-count")?)]);
            q.push(("gbz", "1".into()));
            if let Some(proof) = line.get("proof") {
                let power = proof.get("power").and_then(Value::as_u64).ok_or("proof without power")?;
                let md5 = proof.get("md5").and_then(Value::as_str).ok_or("proof without md5")?;
                q.extend([("pp", power.to_string()), ("ph", md5.into())]);
            }
        }
        other => return Err(format!("work type '{other}' is not reported by this program")),
    }
    if let Some(len) = line.get("fft-length").and_then(Value::as_u64) {
        q.push(("fftlen", len.to_string()));
    }
    Ok(q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(text: &str) -> Answer {
        Answer::parse(text).unwrap()
    }

    #[test]
    fn answers_parse_and_errors_are_named() {
        let a = answer("pnErrorResult=0\npnErrorDetail=SUCCESS\r\ng=ABC\n==END==\nignored=1\n");
        assert_eq!((a.code(), a.get("g"), a.get("ignored")), (code::OK, Some("ABC"), None));
        let a = answer("pnErrorResult=40\npnErrorDetail=no work\n==END==");
        assert_eq!(a.describe(), "PrimeNet error 40 (no assignment): no work");
        assert!(Answer::parse("<html>busy</html>").is_err());
        assert!(Answer::parse("pnErrorResult=x\n").is_err());
    }

    #[test]
    fn the_query_has_the_head_and_the_unsecured_hash_fields() {
        let q = query("ga", "G", vec![("c", "0".into())]);
        let keys: Vec<&str> = q.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["px", "v", "t", "g", "c", "ss", "sh"]);
        assert_eq!(q[5].1, "19191919");
    }

    #[test]
    fn assignments_become_worktodo_lines_prime95_writes() {
        let k = "0123456789ABCDEF0123456789ABCDEF";
        let prp = answer(&format!(
            "pnErrorResult=0\nw=150\nk={k}\nn=9689\nA=1\nb=2\nc=-1\nsf=75\nsaved=1.3\nbase=3\nrt=1\n==END=="
        ));
        assert_eq!(assignment_line(&prp).unwrap(), format!("PRP={k},1,2,9689,-1,75,1.3,3,1"));
        let dc = answer(&format!("pnErrorResult=0\nw=150\ndc=1\nk={k}\nn=9689\nA=1\nb=2\nc=-1\n==END=="));
        assert_eq!(assignment_line(&dc).unwrap(), format!("PRPDC={k},1,2,9689,-1"));
        let ll = answer(&format!("pnErrorResult=0\nw=101\nk={k}\nn=4423\nsf=68\np1=1\n==END=="));
        assert_eq!(assignment_line(&ll).unwrap(), format!("DoubleCheck={k},4423,68,1"));
        let kf = answer(&format!("pnErrorResult=0\nw=150\nk={k}\nn=9689\nA=1\nb=2\nc=-1\nkf=12345\n==END=="));
        assert_eq!(assignment_line(&kf).unwrap(), format!("PRP={k},1,2,9689,-1,\"12345\""));
        let tf = answer(&format!("pnErrorResult=0\nw=2\nk={k}\nn=9689\n==END=="));
        assert!(assignment_line(&tf).unwrap_err().contains("work type 2"));
        assert!(assignment_line(&answer("pnErrorResult=0\nw=150\n==END==")).is_err());
    }

    #[test]
    fn result_lines_become_ar_parameters() {
        let prp = json!({"exponent": 9689, "worktype": "PRP-3", "status": "C", "res64": "ABCDEF0123456789",
            "residue-type": 1, "shift-count": 7, "fft-length": 512, "error-code": "00000000",
            "proof": {"version": 2, "power": 5, "hashsize": 64, "md5": "ff"}, "aid": "K"});
        let q: BTreeMap<&str, String> = result_params(&prp).unwrap().into_iter().collect();
        for (k, v) in [("k", "K"), ("r", "150"), ("n", "9689"), ("rd", "ABCDEF0123456789"), ("rt", "1"), ("base", "3")]
        {
            assert_eq!(q[k], v, "{k}");
        }
        for (k, v) in [("sc", "7"), ("ec", "00000000"), ("gbz", "1"), ("pp", "5"), ("ph", "ff"), ("fftlen", "512")] {
            assert_eq!(q[k], v, "{k}");
        }
        assert_eq!(serde_json::from_str::<Value>(&q["m"]).unwrap(), prp);
        let ll = json!({"exponent": 9689, "worktype": "LL", "status": "P", "res64": "0000000000000000",
            "shift-count": 3, "error-code": "00200000"});
        let q: BTreeMap<&str, String> = result_params(&ll).unwrap().into_iter().collect();
        assert_eq!((q["k"].as_str(), q["r"].as_str(), q.get("rd"), q["ec"].as_str()), ("0", "101", None, "00200000"));
        assert!(result_params(&json!({"exponent": 1, "worktype": "TF", "status": "NF"})).is_err());
    }
}
