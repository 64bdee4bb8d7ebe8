//! RFC 3339 UTC timestamps as certificates write them: `YYYY-MM-DDTHH:MM:SSZ`, optionally with a
//! fraction of a second (`.123Z`). Only this UTC form is written or accepted (no offsets, no
//! lower-case `t`/`z`, no leap second), so that one instant has one spelling.

use std::time::{SystemTime, UNIX_EPOCH};

/// Format a time as RFC 3339 UTC with whole seconds, e.g. `2026-11-22T02:33:55Z`. Times before
/// 1970 are clamped to the epoch (a certificate cannot have been made then).
pub fn rfc3339_utc(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Format a time as GIMPS result lines and logs write it: UTC, `YYYY-MM-DD HH:MM:SS`.
pub fn gimps_utc(t: SystemTime) -> String {
    let s = rfc3339_utc(t);
    format!("{} {}", &s[..10], &s[11..19])
}

/// Parse the strict UTC form into (seconds since 1970, nanoseconds), or say what is wrong.
pub(crate) fn parse_rfc3339_utc(s: &str) -> Result<(i64, u32), String> {
    let b = s.as_bytes();
    let shape = "expected YYYY-MM-DDTHH:MM:SS[.fraction]Z (UTC)";
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return Err(shape.into());
    }
    let num = |r: std::ops::Range<usize>| -> Result<u32, String> {
        let digits = &b[r];
        if !digits.iter().all(u8::is_ascii_digit) {
            return Err(shape.to_string());
        }
        Ok(digits.iter().fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0')))
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let tail = &b[19..];
    let nanos = match tail {
        [b'Z'] => 0,
        [b'.', frac @ .., b'Z'] if (1..=9).contains(&frac.len()) && frac.iter().all(u8::is_ascii_digit) => {
            let v = frac.iter().fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0'));
            v * 10u32.pow(9 - frac.len() as u32)
        }
        _ => return Err(shape.into()),
    };
    if !(1..=12).contains(&mo) || d == 0 || d > days_in_month(y, mo) {
        return Err(format!("no such date {y:04}-{mo:02}-{d:02}"));
    }
    if h > 23 || mi > 59 || sec > 59 {
        return Err(format!("no such time {h:02}:{mi:02}:{sec:02}"));
    }
    let days = days_from_civil(y as i64, mo, d);
    Ok((days * 86_400 + i64::from(h * 3600 + mi * 60 + sec), nanos))
}

fn days_in_month(y: u32, m: u32) -> u32 {
    match m {
        2 if (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Inverse of [`days_from_civil`].
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn gimps_form_is_date_space_time() {
        assert_eq!(gimps_utc(UNIX_EPOCH + Duration::from_secs(1_795_000_000)), "2026-11-18 11:06:40");
        assert_eq!(gimps_utc(UNIX_EPOCH), "1970-01-01 00:00:00");
    }

    quickcheck::quickcheck! {
        fn parse_never_panics(s: String) -> bool {
            let _ = parse_rfc3339_utc(&s);
            true
        }

        fn any_time_round_trips(secs: u64) -> bool {
            let secs = secs % 253_402_300_800; // up to the year 9999
            parse_rfc3339_utc(&rfc3339_utc(UNIX_EPOCH + Duration::from_secs(secs))) == Ok((secs as i64, 0))
        }
    }

    #[test]
    fn format_and_parse_agree() {
        for secs in [0u64, 951_782_400, 1_763_778_835, 4_102_444_799, 253_402_300_799] {
            let t = UNIX_EPOCH + Duration::from_secs(secs);
            let s = rfc3339_utc(t);
            assert_eq!(parse_rfc3339_utc(&s), Ok((secs as i64, 0)), "{s}");
        }
        assert_eq!(rfc3339_utc(UNIX_EPOCH + Duration::from_secs(951_782_400)), "2000-02-29T00:00:00Z");
        assert_eq!(parse_rfc3339_utc("2026-11-22T02:33:55.5Z"), Ok((1_795_314_835, 500_000_000)));
    }

    #[test]
    fn rejects_other_spellings() {
        for s in [
            "",
            "2026-11-22",
            "2026-11-22 02:33:55Z",
            "2026-11-22T02:33:55",
            "2026-11-22T02:33:55z",
            "2026-11-22T02:33:55+00:00",
            "2026-11-22T02:33:55.Z",
            "2026-11-22T02:33:55.1234567890Z",
            "2026-13-22T02:33:55Z",
            "2025-02-29T02:33:55Z",
            "2026-11-22T24:00:00Z",
            "2026-11-22T23:59:60Z",
            "+026-11-22T02:33:55Z",
            "2026-11-22T02:33:55Zx",
            "２026-11-22T02:33:55Z",
        ] {
            assert!(parse_rfc3339_utc(s).is_err(), "{s:?}");
        }
    }
}
