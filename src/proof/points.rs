//! Saving the proof-point residues during a PRP run, and choosing the proof power.
//!
//! Each point is one file `<iteration>.point` in the store's directory: a fixed header (magic,
//! p, power, iteration), the ⌈p/8⌉ residue bytes, and a blake3 hash of everything before it.
//! Files are written atomically (temporary file, fsync, rename, fsync of the directory), and
//! every load checks the hash, so a corrupted point is caught — and named — before a proof
//! built from it is published.
//!
//! Power: GIMPS programs (prime95's `best_power`, gpuowl's `ProofSet::bestPower`) add one to the
//! power per fourfold increase of p, with power 10 from p = 106.5M: 10 + ⌊log4(p/106.5e6)⌋, so
//! 8 for 6.7M–26.6M, 9 up to 106.5M, 10 up to 426M. Where that drops below 5 (where gpuowl would
//! disable proofs) we use 5, and never more than [`pietrzak::max_power`]. Disk use is
//! 2^power · ⌈p/8⌉ bytes (≈ p·2^power/8), which [`choose_power`] fits into a budget.

use super::pietrzak::{self, ScheduleError, MAX_POWER};
use crate::residue::{byte_count, Residue};
use std::fs;
use std::path::{Path, PathBuf};
use thiserror::Error;

const MAGIC: &[u8; 8] = b"MCPROOF1";
const HEADER_LEN: usize = 8 + 4 + 4 + 8;
const HASH_LEN: usize = 32;
/// The least power [`default_power`] picks (gpuowl disables proofs below it instead).
const MIN_DEFAULT_POWER: u32 = 5;

/// Why a proof point could not be saved or loaded, or no power fits the disk.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    #[error("I/O error on {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("iteration {iteration} is not a proof point for p={p}, power={power}")]
    NotAPoint { p: u32, power: u32, iteration: u64 },
    #[error("residue for p={got} saved into a proof store for p={want}")]
    WrongExponent { want: u32, got: u32 },
    #[error("proof point index {index} is out of range (power {power} has {count} points)")]
    IndexOutOfRange { index: usize, power: u32, count: usize },
    #[error("proof point {index} (iteration {iteration}) is missing: {path}")]
    Missing { index: usize, iteration: u64, path: PathBuf },
    #[error("the points saved in {dir} are of power {saved}: they hold no proof of power {want}")]
    PowerAboveSaved { dir: PathBuf, saved: u32, want: u32 },
    #[error("proof point {index} (iteration {iteration}) is corrupt ({why}): {path}")]
    Corrupt { index: usize, iteration: u64, path: PathBuf, why: &'static str },
    #[error(
        "a proof for p={p} needs at least {needed} bytes of disk for its points (power 1), \
         but the budget is {budget} bytes"
    )]
    DiskBudget { p: u32, needed: u64, budget: u64 },
}

/// Bytes of disk the 2^power saved points of a run take (≈ p·2^power/8).
pub fn disk_usage(p: u32, power: u32) -> u64 {
    let one = (HEADER_LEN + byte_count(p) + HASH_LEN) as u64;
    1u64.checked_shl(power).and_then(|n| one.checked_mul(n)).unwrap_or(u64::MAX)
}

/// The power GIMPS programs would choose for p (see the module doc).
pub fn default_power(p: u32) -> u32 {
    let gimps = 10 + ((p as f64 / 106.5e6).log2() / 2.0).floor() as i64;
    let max = pietrzak::max_power(p).max(1);
    (gimps.clamp(MIN_DEFAULT_POWER as i64, MAX_POWER as i64) as u32).min(max)
}

/// The power a run will use and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PowerChoice {
    pub power: u32,
    pub disk_bytes: u64,
    /// Set when the power had to be lowered to fit the budget.
    pub note: Option<String>,
}

/// Pick the power: `requested` (or [`default_power`]), lowered until its points fit in
/// `budget_bytes`; an error when not even power 1 fits, or the request is not a valid power.
pub fn choose_power(p: u32, requested: Option<u32>, budget_bytes: u64) -> Result<PowerChoice, StoreError> {
    let want = requested.unwrap_or_else(|| default_power(p));
    pietrzak::check_params(p, want)?;
    let power = (1..=want).rev().find(|&k| disk_usage(p, k) <= budget_bytes);
    let Some(power) = power else {
        return Err(StoreError::DiskBudget { p, needed: disk_usage(p, 1), budget: budget_bytes });
    };
    let note = (power < want).then(|| {
        format!(
            "proof power lowered from {want} to {power} to fit {budget_bytes} bytes of disk \
             ({} needed); verifying will take {} squarings instead of {}",
            disk_usage(p, want),
            pietrzak::final_span(p, power),
            pietrzak::final_span(p, want)
        )
    });
    Ok(PowerChoice { power, disk_bytes: disk_usage(p, power), note })
}

/// The proof points of one run, saved in a directory.
#[derive(Debug, Clone)]
pub struct ProofStore {
    dir: PathBuf,
    p: u32,
    power: u32,
    /// The power the files were saved for (their header says it); above `power` in a view
    /// made by [`ProofStore::at_power`].
    saved_power: u32,
    points: Vec<u64>,
}

impl ProofStore {
    /// Open (creating if needed) the store for (p, power) in `dir`.
    pub fn new(dir: &Path, p: u32, power: u32) -> Result<ProofStore, StoreError> {
        let points = pietrzak::proof_points(p, power)?;
        fs::create_dir_all(dir).map_err(|source| StoreError::Io { path: dir.to_path_buf(), source })?;
        Ok(ProofStore { dir: dir.to_path_buf(), p, power, saved_power: power, points })
    }

    /// Open the points a finished run saved in `dir` (for example kept with `prove
    /// --keep-proof-points`) at the power their last point, x_p, was saved for.
    pub fn open_saved(dir: &Path, p: u32) -> Result<ProofStore, StoreError> {
        let path = dir.join(format!("{p}.point"));
        let bytes = crate::fsutil::read_regular(&path, (HEADER_LEN + byte_count(p) + HASH_LEN) as u64)
            .map_err(|source| StoreError::Io { path: path.clone(), source })?;
        let header = bytes.get(..HEADER_LEN).filter(|h| &h[..8] == MAGIC && h[8..12] == p.to_le_bytes());
        let Some(header) = header else {
            return Err(StoreError::Corrupt {
                index: 0,
                iteration: p as u64,
                path,
                why: "not a proof point of this exponent",
            });
        };
        let power = u32::from_le_bytes(header[12..16].try_into().expect("4 bytes"));
        pietrzak::check_params(p, power)?;
        Ok(ProofStore {
            dir: dir.to_path_buf(),
            p,
            power,
            saved_power: power,
            points: pietrzak::proof_points(p, power)?,
        })
    }

    /// The same saved points seen as a store of a power at most the saved one: the points of
    /// power k are those of power K > k whose last K − k bits are 0 (the spans ⌈p/2^l⌉ do not
    /// depend on the power), so one run's points also give every lower power's proof.
    pub fn at_power(&self, power: u32) -> Result<ProofStore, StoreError> {
        if power > self.saved_power {
            return Err(StoreError::PowerAboveSaved { dir: self.dir.clone(), saved: self.saved_power, want: power });
        }
        let points = pietrzak::proof_points(self.p, power)?;
        Ok(ProofStore { power, points, ..self.clone() })
    }

    pub fn exponent(&self) -> u32 {
        self.p
    }

    pub fn power(&self) -> u32 {
        self.power
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The iterations to save, increasing (the last is p).
    pub fn points(&self) -> &[u64] {
        &self.points
    }

    /// The first proof point after `iteration` (where the run must stop next), if any.
    pub fn next_point(&self, iteration: u64) -> Option<u64> {
        let i = self.points.partition_point(|&k| k <= iteration);
        self.points.get(i).copied()
    }

    fn path(&self, iteration: u64) -> PathBuf {
        self.dir.join(format!("{iteration}.point"))
    }

    fn encode(&self, iteration: u64, r: &Residue) -> Vec<u8> {
        let mut v = Vec::with_capacity(HEADER_LEN + byte_count(self.p) + HASH_LEN);
        v.extend_from_slice(MAGIC);
        v.extend_from_slice(&self.p.to_le_bytes());
        v.extend_from_slice(&self.saved_power.to_le_bytes());
        v.extend_from_slice(&iteration.to_le_bytes());
        v.extend_from_slice(&r.to_bytes());
        let hash = blake3::hash(&v);
        v.extend_from_slice(hash.as_bytes());
        v
    }

    /// Save x_iteration; `iteration` must be a proof point. Atomic: a crash leaves either the
    /// old file or the new one.
    pub fn save(&self, iteration: u64, r: &Residue) -> Result<(), StoreError> {
        if r.exponent() != self.p {
            return Err(StoreError::WrongExponent { want: self.p, got: r.exponent() });
        }
        if self.points.binary_search(&iteration).is_err() {
            return Err(StoreError::NotAPoint { p: self.p, power: self.power, iteration });
        }
        let path = self.path(iteration);
        crate::fsutil::write_atomic(&path, &self.encode(iteration, r), 0o644)
            .map_err(|source| StoreError::Io { path, source })
    }

    /// Load point `index` (0-based into [`ProofStore::points`]), checking its hash and header.
    pub fn load(&self, index: usize) -> Result<Residue, StoreError> {
        let count = self.points.len();
        let iteration =
            *self.points.get(index).ok_or(StoreError::IndexOutOfRange { index, power: self.power, count })?;
        let path = self.path(iteration);
        // A regular file of a point's size: a FIFO or a link to a device is refused, not read.
        let bytes = match crate::fsutil::read_regular(&path, (HEADER_LEN + byte_count(self.p) + HASH_LEN) as u64) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(StoreError::Missing { index, iteration, path });
            }
            Err(source) => return Err(StoreError::Io { path, source }),
        };
        let corrupt = |why| StoreError::Corrupt { index, iteration, path: path.clone(), why };
        if bytes.len() != HEADER_LEN + byte_count(self.p) + HASH_LEN {
            return Err(corrupt("wrong size"));
        }
        let (body, hash) = bytes.split_at(bytes.len() - HASH_LEN);
        if blake3::hash(body).as_bytes() != hash {
            return Err(corrupt("checksum mismatch"));
        }
        if body[..HEADER_LEN] != self.encode(iteration, &Residue::from_u64(self.p, 0))[..HEADER_LEN] {
            return Err(corrupt("header does not match this store"));
        }
        Residue::from_bytes(self.p, &body[HEADER_LEN..]).map_err(|_| corrupt("non-canonical residue"))
    }

    /// Check (load, with checksum) every point at or before `iteration`: what a run resuming
    /// from a checkpoint at `iteration` must have on disk for its proof to be buildable.
    pub fn check_through(&self, iteration: u64) -> Result<(), StoreError> {
        let n = self.points.partition_point(|&k| k <= iteration);
        (0..n).try_for_each(|i| self.load(i).map(drop))
    }

    /// Delete every saved point (and temporary file left by an interrupted write) of this
    /// store, then the directory if empty.
    pub fn remove_all(&self) -> Result<(), StoreError> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(source) => return Err(StoreError::Io { path: self.dir.clone(), source }),
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let ours = name.split_once(".point").is_some_and(|(k, rest)| {
                k.parse::<u64>().is_ok_and(|k| self.points.binary_search(&k).is_ok())
                    && (rest.is_empty() || rest.starts_with(".tmp"))
            });
            if ours {
                let path = entry.path();
                match fs::remove_file(&path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(StoreError::Io { path, source: e })
                    }
                    _ => {}
                }
            }
        }
        // Leave a directory that holds anything else alone.
        let _ = fs::remove_dir(&self.dir);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_powers_follow_gimps() {
        assert_eq!(default_power(136_279_841), 10);
        assert_eq!(default_power(106_500_000 + 1), 10); // not prime, but only the size matters here
        assert_eq!(default_power(82_589_933), 9);
        assert_eq!(default_power(26_700_000), 9);
        assert_eq!(default_power(20_996_011), 8);
        assert_eq!(default_power(6_972_593), 8);
        assert_eq!(default_power(1_257_787), 6);
        assert_eq!(default_power(44_497), 5);
        assert_eq!(default_power(31), pietrzak::max_power(31));
    }

    #[test]
    fn budget_lowers_or_refuses() {
        let p = 1_257_787;
        let c = choose_power(p, Some(8), u64::MAX).unwrap();
        assert_eq!((c.power, c.note), (8, None));
        assert!(c.disk_bytes >= (p as u64) * 256 / 8);
        let c = choose_power(p, Some(8), disk_usage(p, 6)).unwrap();
        assert_eq!(c.power, 6);
        assert!(c.note.unwrap().contains("lowered from 8 to 6"));
        assert!(matches!(choose_power(p, None, 1000), Err(StoreError::DiskBudget { .. })));
        assert!(matches!(choose_power(p, Some(13), u64::MAX), Err(StoreError::Schedule(_))));
    }

    #[test]
    fn save_load_and_reject() {
        let dir = tempfile::tempdir().unwrap();
        let store = ProofStore::new(&dir.path().join("pts"), 521, 3).unwrap();
        let pts = store.points().to_vec();
        assert_eq!(pts.len(), 8);
        assert_eq!(store.next_point(0), Some(pts[0]));
        assert_eq!(store.next_point(pts[0]), Some(pts[1]));
        assert_eq!(store.next_point(521), None);
        let r = Residue::from_u64(521, 12345);
        assert!(matches!(store.save(pts[0] + 1, &r), Err(StoreError::NotAPoint { .. })));
        assert!(matches!(store.save(pts[0], &Residue::from_u64(607, 1)), Err(StoreError::WrongExponent { .. })));
        assert!(matches!(store.load(0), Err(StoreError::Missing { index: 0, .. })));
        assert!(matches!(store.load(8), Err(StoreError::IndexOutOfRange { .. })));
        assert!(store.check_through(pts[0] - 1).is_ok());
        assert!(matches!(store.check_through(pts[0]), Err(StoreError::Missing { index: 0, .. })));
        store.save(pts[0], &r).unwrap();
        assert_eq!(store.load(0).unwrap(), r);
        assert!(store.check_through(pts[1] - 1).is_ok());
        // A point file copied under another iteration's name is caught by its header.
        fs::copy(store.path(pts[0]), store.path(pts[1])).unwrap();
        assert!(matches!(store.load(1), Err(StoreError::Corrupt { index: 1, .. })));
        // A flipped byte anywhere is caught by the checksum.
        let len = fs::metadata(store.path(pts[0])).unwrap().len() as usize;
        for pos in [0, 9, HEADER_LEN, len - 1] {
            store.save(pts[0], &r).unwrap();
            let mut b = fs::read(store.path(pts[0])).unwrap();
            b[pos] ^= 0x10;
            fs::write(store.path(pts[0]), b).unwrap();
            assert!(matches!(store.load(0), Err(StoreError::Corrupt { index: 0, .. })), "pos {pos}");
        }
        // A temporary file left by an interrupted write goes too.
        fs::write(store.dir().join(format!("{}.point.tmp4242", pts[1])), b"torn").unwrap();
        store.remove_all().unwrap();
        assert!(!store.dir().exists());
    }

    #[test]
    fn lower_powers_are_views_of_the_saved_points() {
        for p in [521u32, 9689, 86_243, 1_257_787, 20_996_011] {
            let top = pietrzak::max_power(p).min(10);
            let all = pietrzak::proof_points(p, top).unwrap();
            for k in 1..top {
                let sub = pietrzak::proof_points(p, k).unwrap();
                assert!(sub.iter().all(|x| all.binary_search(x).is_ok()), "p={p} k={k}");
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let (p, saved) = (9689, 5);
        let store = ProofStore::new(dir.path(), p, saved).unwrap();
        for (i, &k) in store.points().iter().enumerate() {
            store.save(k, &Residue::from_u64(p, i as u64 + 7)).unwrap();
        }
        let opened = ProofStore::open_saved(dir.path(), p).unwrap();
        assert_eq!((opened.power(), opened.points()), (saved, store.points()));
        let low = opened.at_power(3).unwrap();
        assert_eq!(low.points(), pietrzak::proof_points(p, 3).unwrap());
        for (i, &k) in low.points().iter().enumerate() {
            let j = store.points().binary_search(&k).unwrap();
            assert_eq!(low.load(i).unwrap(), Residue::from_u64(p, j as u64 + 7));
        }
        assert!(matches!(opened.at_power(6), Err(StoreError::PowerAboveSaved { saved: 5, want: 6, .. })));
        assert!(ProofStore::open_saved(dir.path(), 9941).is_err());
        let other = tempfile::tempdir().unwrap();
        ProofStore::new(other.path(), p, saved).unwrap().save(p as u64, &Residue::from_u64(p, 1)).unwrap();
        fs::write(other.path().join(format!("{p}.point")), b"MCPROOF1 truncated").unwrap();
        assert!(matches!(ProofStore::open_saved(other.path(), p), Err(StoreError::Corrupt { .. })));
    }
}
