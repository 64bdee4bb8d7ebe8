//! A replay spread over many machines: `verify --new-shard-key KEY` makes the run's secret,
//! `verify --shard I/N --shard-key KEY` replays the I-th of N deterministic slices of a
//! certificate's segments and writes a small part report authenticated with that key (a keyed
//! blake3 MAC), and `verify --merge --shard-key KEY` accepts the parts only if their MACs are
//! right (so nobody without the key, the prover included, can make one), they come from this
//! exact certificate, cover every segment exactly once and all matched. The slices balance the
//! iterations (longest segment first, each to the least loaded slice), so every machine of a job
//! array gets about the same work.

use super::replay::{check_result, segments_from, ReplayError, ReplayOptions, Segment};
use super::schedule::{self, SegmentRun};
use crate::cert::CertBody;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::str::FromStr;
use std::time::Instant;
use thiserror::Error;

/// Format tag of a part report.
pub const PART_FORMAT: &str = "mersenne-cert-verify-part";
/// Version this program writes and reads (2: a keyed MAC in place of version 1's plain digest).
pub const PART_VERSION: u64 = 2;
/// A merge names at most this many missing or failed segments (then counts the rest).
const NAMED: usize = 20;

/// The secret of one sharded verification: 32 random bytes, made once (`verify --new-shard-key`)
/// and given to every shard and to the merge. The file holds 64 hex digits and a newline.
#[derive(Clone, PartialEq, Eq)]
pub struct ShardKey([u8; 32]);

impl std::fmt::Debug for ShardKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ShardKey(…)")
    }
}

/// Why a shard key file is refused.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ShardKeyError {
    #[error("malformed shard key: expected 64 hex digits and an optional newline")]
    Malformed,
    #[error("no randomness for a shard key: {0}")]
    NoRandomness(String),
}

impl ShardKey {
    /// A fresh key from the operating system's random source.
    pub fn generate() -> Result<ShardKey, ShardKeyError> {
        let mut k = [0u8; 32];
        getrandom::getrandom(&mut k).map_err(|e| ShardKeyError::NoRandomness(e.to_string()))?;
        Ok(ShardKey(k))
    }

    /// The key file's text.
    pub fn to_file_text(&self) -> String {
        format!("{}\n", hex::encode(self.0))
    }

    /// Parse a key file's bytes (never echoed in errors).
    pub fn parse(bytes: &[u8]) -> Result<ShardKey, ShardKeyError> {
        let digits = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let mut k = [0u8; 32];
        hex::decode_to_slice(digits, &mut k).map_err(|_| ShardKeyError::Malformed)?;
        Ok(ShardKey(k))
    }
}

/// Slice `index` of `count` (`--shard I/N`, I from 0 as in Kubernetes' completion index and
/// `sbatch --array=0-(N-1)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardSpec {
    pub index: usize,
    pub count: usize,
}

impl FromStr for ShardSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("'{s}' is not I/N with 0 <= I < N (e.g. 0/8 for the first of 8 shards)");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (usize, usize) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
        if index >= count {
            return Err(bad());
        }
        Ok(ShardSpec { index, count })
    }
}

impl std::fmt::Display for ShardSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Which segments (indices) fall in each of `count` slices: longest first, each to the slice
/// with the fewest iterations so far (the lowest index among equals). Depends only on the
/// segments' lengths and order, so every machine computes the same slices.
pub fn slices(segs: &[Segment], count: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..segs.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(segs[i].iterations()), i));
    let mut load = vec![0u64; count];
    let mut out = vec![Vec::new(); count];
    for i in order {
        let s = (0..count).min_by_key(|&s| (load[s], s)).expect("count >= 1");
        load[s] += segs[i].iterations();
        out[s].push(i);
    }
    for s in &mut out {
        s.sort_unstable();
    }
    out
}

/// One segment's line in a part report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartSegment {
    /// The segment's start and end iterations.
    pub from: u64,
    pub to: u64,
    /// Checkpoint hashes compared inside it.
    pub checkpoints: u64,
    /// "ok", or why it failed.
    pub verdict: String,
    /// blake3 (hex) of the recomputed residue at `to`, when it matched.
    pub hash: Option<String>,
    pub seconds: f64,
    /// "gpu N" or "cpu".
    pub worker: String,
}

/// A part report: what one shard replayed. `mac` (blake3 keyed with the run's [`ShardKey`], over
/// the report with an empty `mac`) catches a part that was edited, damaged, or made by anyone
/// who does not hold the key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Part {
    pub format: String,
    pub version: u64,
    /// blake3 of the certificate file.
    pub certificate: String,
    pub exponent: u32,
    pub shard: usize,
    pub shards: usize,
    pub segments: Vec<PartSegment>,
    pub engine: String,
    pub seconds: f64,
    pub mac: String,
}

impl Part {
    fn compute_mac(&self, key: &ShardKey) -> String {
        let mut blank = self.clone();
        blank.mac.clear();
        blake3::keyed_hash(&key.0, &serde_json::to_vec(&blank).expect("a part serializes")).to_hex().to_string()
    }

    /// The report as written to disk (pretty JSON, one trailing newline).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a part serializes") + "\n"
    }

    /// Did every segment of this part match?
    pub fn all_ok(&self) -> bool {
        self.segments.iter().all(|s| s.verdict == "ok")
    }
}

/// Replay shard `spec` of the certificate `body` (whose file hashes to `certificate`) with
/// `opts` (its `sample` is ignored): every segment of the slice is replayed, failures included,
/// and reported in the part, which carries its MAC under `key`.
pub fn replay_shard(
    body: &CertBody,
    certificate: &str,
    spec: ShardSpec,
    opts: &ReplayOptions,
    key: &ShardKey,
) -> Result<Part, ReplayError> {
    if opts.jobs == 0 {
        return Err(ReplayError::Jobs);
    }
    check_result(body)?;
    let start = Instant::now();
    let all = segments_from(body, &opts.points)?;
    let mine: Vec<&Segment> = slices(&all, spec.count)[spec.index].iter().map(|&i| &all[i]).collect();
    let (p, kind) = (body.exponent, body.kind);
    let workers = schedule::workers(&opts.ask, opts.jobs, p, kind, &mine)?;
    let done = schedule::run(&mine, &workers, false);
    let segments = mine
        .iter()
        .zip(done.runs)
        .map(|(seg, run)| {
            let (verdict, hash, seconds, worker) = match run {
                Some(SegmentRun { verdict: Ok(h), seconds, worker }) => {
                    ("ok".into(), Some(hex::encode(h)), seconds, worker)
                }
                Some(SegmentRun { verdict: Err(e), seconds, worker }) => (e.to_string(), None, seconds, worker),
                None => ("not replayed: no worker was left to take it".into(), None, 0.0, String::new()),
            };
            PartSegment {
                from: seg.from,
                to: seg.checks.last().map_or(seg.from, |c| c.0),
                checkpoints: seg.checks.len() as u64,
                verdict,
                hash,
                seconds,
                worker,
            }
        })
        .collect();
    let mut part = Part {
        format: PART_FORMAT.into(),
        version: PART_VERSION,
        certificate: certificate.into(),
        exponent: p,
        shard: spec.index,
        shards: spec.count,
        segments,
        engine: done.engines,
        seconds: start.elapsed().as_secs_f64(),
        mac: String::new(),
    };
    part.mac = part.compute_mac(key);
    Ok(part)
}

/// Why a merge was refused: every problem found, each naming its part or segments.
#[derive(Debug, Error)]
pub enum MergeError {
    #[error("{0}")]
    Replay(#[from] ReplayError),
    #[error("merge refused: {}", .0.join("; "))]
    Refused(Vec<String>),
}

/// What a successful merge covered.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    pub parts: usize,
    pub segments: usize,
    pub hashes_checked: u64,
    /// Sum of the parts' wall times, and the longest.
    pub seconds_total: f64,
    pub seconds_max: f64,
}

fn range_list(ranges: &[(u64, u64)]) -> String {
    let mut s: Vec<String> = ranges.iter().take(NAMED).map(|(a, b)| format!("{a}-{b}")).collect();
    if ranges.len() > NAMED {
        s.push(format!("and {} more", ranges.len() - NAMED));
    }
    s.join(", ")
}

/// Merge the part reports `parts` (name, bytes) for the certificate `body` whose file hashes to
/// `certificate`, with the segments cut at `points` as the shards cut them; every part's MAC must
/// be right under `key`.
pub fn merge(
    body: &CertBody,
    certificate: &str,
    points: &BTreeMap<u64, crate::residue::Residue>,
    parts: &[(String, Vec<u8>)],
    key: &ShardKey,
) -> Result<Merged, MergeError> {
    check_result(body)?;
    let all = segments_from(body, points)?;
    let ends: BTreeMap<u64, [u8; 32]> = body.checkpoints.iter().map(|c| (c.iteration, c.hash)).collect();
    // Segment (from, to) -> the part that covers it.
    let mut covered: BTreeMap<(u64, u64), Option<&str>> =
        all.iter().map(|s| ((s.from, s.checks.last().map_or(s.from, |c| c.0)), None)).collect();
    let mut problems = Vec::new();
    let mut failed = Vec::new();
    let (mut hashes, mut seconds_total, mut seconds_max) = (0u64, 0f64, 0f64);
    for (name, bytes) in parts {
        let part: Part = match serde_json::from_slice(bytes) {
            Ok(p) => p,
            Err(e) => {
                problems.push(format!("{name} is not a verify part report ({e})"));
                continue;
            }
        };
        if part.format != PART_FORMAT || part.version != PART_VERSION {
            problems.push(format!(
                "{name}: format {:?} version {} is not a part this program reads",
                part.format, part.version
            ));
            continue;
        }
        if part.mac != part.compute_mac(key) {
            problems.push(format!(
                "{name}: its MAC does not match (the part was edited or damaged, or made without this run's shard key)"
            ));
            continue;
        }
        if part.certificate != certificate {
            problems
                .push(format!("{name}: it replayed certificate {}, not this one ({certificate})", part.certificate));
            continue;
        }
        seconds_total += part.seconds;
        seconds_max = seconds_max.max(part.seconds);
        for seg in &part.segments {
            let key = (seg.from, seg.to);
            match covered.get_mut(&key) {
                None => problems.push(format!(
                    "{name}: {}-{} is not a segment of this certificate (were the shards cut at other replay points?)",
                    seg.from, seg.to
                )),
                Some(Some(other)) => {
                    problems.push(format!("segment {}-{} is covered twice ({other} and {name})", seg.from, seg.to))
                }
                Some(slot) => {
                    *slot = Some(name.as_str());
                    let want = ends.get(&seg.to).map(hex::encode);
                    if seg.verdict != "ok" {
                        failed.push(format!("{}-{} ({name}: {})", seg.from, seg.to, seg.verdict));
                    } else if seg.hash != want {
                        problems.push(format!(
                            "{name}: segment {}-{} says ok but its hash is not the certificate's at iteration {}",
                            seg.from, seg.to, seg.to
                        ));
                    } else {
                        hashes += seg.checkpoints;
                    }
                }
            }
        }
    }
    let missing: Vec<(u64, u64)> = covered.iter().filter(|(_, v)| v.is_none()).map(|(k, _)| *k).collect();
    if !missing.is_empty() {
        problems.push(format!("{} of {} segments missing: {}", missing.len(), all.len(), range_list(&missing)));
    }
    if !failed.is_empty() {
        let n = failed.len();
        let mut named: Vec<String> = failed.into_iter().take(NAMED).collect();
        if n > NAMED {
            named.push(format!("and {} more", n - NAMED));
        }
        problems.push(format!("{n} segment(s) failed: {}", named.join(", ")));
    }
    if !problems.is_empty() {
        return Err(MergeError::Refused(problems));
    }
    Ok(Merged { parts: parts.len(), segments: all.len(), hashes_checked: hashes, seconds_total, seconds_max })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cert::samples::sample;
    use crate::engine::EngineChoice;
    use crate::exponent::TestKind;
    use crate::residue::Residue;
    use quickcheck::quickcheck;

    fn fake(lengths: &[u64]) -> Vec<Segment> {
        let mut from = 0;
        lengths
            .iter()
            .map(|&n| {
                let s = Segment { from, start: Residue::from_u64(127, 4), checks: vec![(from + n, [0; 32])] };
                from += n;
                s
            })
            .collect()
    }

    quickcheck! {
        /// Every segment lies in exactly one slice, and no slice carries more than the fair share
        /// plus one segment.
        fn slices_partition(lengths: Vec<u16>, count: u8) -> bool {
            let count = count as usize % 17 + 1;
            let lengths: Vec<u64> = lengths.iter().map(|&n| u64::from(n) + 1).collect();
            let segs = fake(&lengths);
            let s = slices(&segs, count);
            let mut seen: Vec<usize> = s.iter().flatten().copied().collect();
            seen.sort_unstable();
            let total: u64 = lengths.iter().sum();
            let longest = lengths.iter().copied().max().unwrap_or(0);
            let balanced = s.iter().all(|sl| sl.iter().map(|&i| lengths[i]).sum::<u64>() <= total / count as u64 + longest);
            s.len() == count && seen == (0..segs.len()).collect::<Vec<_>>() && balanced && s == slices(&segs, count)
        }
    }

    #[test]
    fn shard_specs() {
        assert_eq!("0/1".parse::<ShardSpec>(), Ok(ShardSpec { index: 0, count: 1 }));
        assert_eq!("3/8".parse::<ShardSpec>().unwrap().to_string(), "3/8");
        for bad in ["1/1", "8/8", "0/0", "a/2", "1", "-1/2", "1/2/3"] {
            assert!(bad.parse::<ShardSpec>().is_err(), "{bad}");
        }
    }

    /// Three shards of M_127's LL certificate merge; every way of spoiling them is named.
    #[test]
    fn merge_accepts_only_the_exact_cover() {
        let body = sample(TestKind::Ll, 127, 125, 5);
        let none = BTreeMap::new();
        let opts = ReplayOptions::new(EngineChoice::Cpu, 2);
        let key = ShardKey::generate().unwrap();
        let part = |i| {
            let p = replay_shard(&body, "cafe", ShardSpec { index: i, count: 3 }, &opts, &key).unwrap();
            assert!(p.all_ok());
            (format!("part{i}"), p.to_json().into_bytes())
        };
        let parts: Vec<(String, Vec<u8>)> = (0..3).map(part).collect();
        let m = merge(&body, "cafe", &none, &parts, &key).unwrap();
        assert_eq!((m.parts, m.segments), (3, segments_from(&body, &none).unwrap().len()));
        assert_eq!(m.hashes_checked, body.checkpoints.len() as u64);

        let refused = |parts: &[(String, Vec<u8>)], cert: &str| match merge(&body, cert, &none, parts, &key) {
            Err(MergeError::Refused(p)) => p.join("; "),
            other => panic!("not refused: {other:?}"),
        };
        assert!(refused(&parts[..2], "cafe").contains("segments missing"));
        let dup = [parts.clone(), vec![parts[1].clone()]].concat();
        assert!(refused(&dup, "cafe").contains("covered twice"));
        assert!(refused(&parts, "beef").contains("not this one (beef)"));
        let text = String::from_utf8(parts[0].1.clone()).unwrap();
        let mut edited = parts.clone();
        edited[0].1 = text.replacen("\"ok\"", "\"oK\"", 1).into_bytes();
        assert!(refused(&edited, "cafe").contains("part0: its MAC does not match"));
        edited[0].1 = b"{".to_vec();
        assert!(refused(&edited, "cafe").contains("part0 is not a verify part report"));

        // A part whose segment failed (a certificate hash spoilt): named by its segment.
        let mut bad = body.clone();
        bad.checkpoints[2].hash[0] ^= 1;
        let failing: Vec<(String, Vec<u8>)> = (0..3)
            .map(|i| {
                let p = replay_shard(&bad, "cafe", ShardSpec { index: i, count: 3 }, &opts, &key).unwrap();
                (format!("part{i}"), p.to_json().into_bytes())
            })
            .collect();
        let why = match merge(&bad, "cafe", &none, &failing, &key) {
            Err(MergeError::Refused(p)) => p.join("; "),
            other => panic!("not refused: {other:?}"),
        };
        assert!(why.contains("1 segment(s) failed: 10-20") && why.contains("iteration 15"), "{why}");

        // Issue 35, item 4: a forger without the key writes a part claiming every segment ok,
        // with the right hashes (they are in the certificate) and a MAC under a key of its own.
        let segs = segments_from(&body, &none).unwrap();
        let ends: BTreeMap<u64, [u8; 32]> = body.checkpoints.iter().map(|c| (c.iteration, c.hash)).collect();
        let mut forged = Part {
            format: PART_FORMAT.into(),
            version: PART_VERSION,
            certificate: "cafe".into(),
            exponent: 127,
            shard: 0,
            shards: 1,
            segments: segs
                .iter()
                .map(|s| {
                    let to = s.checks.last().unwrap().0;
                    PartSegment {
                        from: s.from,
                        to,
                        checkpoints: s.checks.len() as u64,
                        verdict: "ok".into(),
                        hash: Some(hex::encode(ends[&to])),
                        seconds: 0.0,
                        worker: "cpu".into(),
                    }
                })
                .collect(),
            engine: "cpu".into(),
            seconds: 0.0,
            mac: String::new(),
        };
        forged.mac = forged.compute_mac(&ShardKey::generate().unwrap());
        let forged = [("forged".to_string(), forged.to_json().into_bytes())];
        assert!(refused(&forged, "cafe").contains("forged: its MAC does not match"));
    }

    #[test]
    fn shard_keys_round_trip_and_never_parse_junk() {
        let k = ShardKey::generate().unwrap();
        assert_ne!(k, ShardKey::generate().unwrap());
        let text = k.to_file_text();
        assert_eq!(text.len(), 65);
        assert_eq!(ShardKey::parse(text.as_bytes()), Ok(k.clone()));
        assert_eq!(ShardKey::parse(text.trim_end().as_bytes()), Ok(k));
        for bad in [&b""[..], b"00", &[b'g'; 64], format!("{}\n\n", "0".repeat(64)).as_bytes()] {
            assert_eq!(ShardKey::parse(bad), Err(ShardKeyError::Malformed));
        }
        assert!(!format!("{:?}", ShardKey::generate().unwrap()).contains('0'));
    }
}
