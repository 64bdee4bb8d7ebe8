//! Replay points kept out of the saved state. Each full residue a run keeps for the certificate's
//! sidecar (`--replay-points`) is written once, when the run reaches it, to a file of its own in
//! the test's state directory: `replay/<iteration>.res` holding a header (magic, p, iteration),
//! the canonical residue bytes and the blake3 of both, written atomically (temporary, fsync,
//! rename, fsync of the directory). The saved state keeps only the checkpoint's hash, so a save
//! no longer rewrites every point (at p = 136,279,841 one is 17 MB, 64 of them ~1 GB).
//!
//! A point file is never taken on trust: when the sidecar is built, each is read back and must
//! hash to its checkpoint's hash in the chain. A file written after the last saved state (the run
//! was killed, or rolled back) is overwritten when the run gets there again; one that is damaged
//! or missing is left out of the sidecar with a warning (the verifier replays a longer segment).

use crate::residue::Residue;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"MCREPLY1";
const HEADER_LEN: usize = 8 + 4 + 8;
const HASH_LEN: usize = 32;
/// The subdirectory of the state directory that holds the points.
const DIR: &str = "replay";

/// The replay points of one test, in its state directory.
#[derive(Debug, Clone)]
pub struct ReplayStore {
    dir: PathBuf,
    p: u32,
}

impl ReplayStore {
    /// The points of M_p under the state directory `state_dir` (created on the first save).
    pub fn new(state_dir: &Path, p: u32) -> Self {
        ReplayStore { dir: state_dir.join(DIR), p }
    }

    /// The file of the point at `iteration`.
    pub fn path(&self, iteration: u64) -> PathBuf {
        self.dir.join(format!("{iteration}.res"))
    }

    /// Write x_k durably (replacing a point left at k by an earlier attempt).
    pub fn save(&self, iteration: u64, x: &Residue) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let mut bytes = Vec::with_capacity(HEADER_LEN + x.words().len() * 8 + HASH_LEN);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&self.p.to_le_bytes());
        bytes.extend_from_slice(&iteration.to_le_bytes());
        bytes.extend_from_slice(&x.to_bytes());
        let sum = blake3::hash(&bytes);
        bytes.extend_from_slice(sum.as_bytes());
        crate::fsutil::write_atomic(&self.path(iteration), &bytes, 0o644)
    }

    /// The point at `iteration`, which must hash to `hash` (its checkpoint's); why not otherwise.
    pub fn load(&self, iteration: u64, hash: &[u8; 32]) -> Result<Residue, String> {
        let path = self.path(iteration);
        // A regular file of a point's size: a FIFO or a link to a device is refused, not read.
        let size = (HEADER_LEN + crate::residue::byte_count(self.p) + HASH_LEN) as u64;
        let bytes = crate::fsutil::read_regular(&path, size).map_err(|e| format!("{}: {e}", path.display()))?;
        let bad = |why: &str| format!("{}: {why}", path.display());
        if bytes.len() < HEADER_LEN + HASH_LEN {
            return Err(bad("truncated"));
        }
        let (body, sum) = bytes.split_at(bytes.len() - HASH_LEN);
        if blake3::hash(body).as_bytes() != sum {
            return Err(bad("checksum mismatch"));
        }
        if &body[..8] != MAGIC || body[8..12] != self.p.to_le_bytes() || body[12..HEADER_LEN] != iteration.to_le_bytes()
        {
            return Err(bad("not this test's point at this iteration"));
        }
        let x = Residue::from_bytes(self.p, &body[HEADER_LEN..]).map_err(|e| bad(&e.to_string()))?;
        if x.hash() != *hash {
            return Err(bad("not the residue its checkpoint's hash names (left by an earlier attempt?)"));
        }
        Ok(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_round_trips_and_anything_else_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let s = ReplayStore::new(dir.path(), 521);
        let x = Residue::from_u64(521, 12345);
        s.save(40, &x).unwrap();
        assert_eq!(s.load(40, &x.hash()).unwrap(), x);
        // Another residue's hash (a point left by a rolled-back attempt), another iteration, a
        // missing file, another exponent's store.
        let y = Residue::from_u64(521, 7);
        assert!(s.load(40, &y.hash()).unwrap_err().contains("checkpoint's hash"));
        assert!(s.load(41, &x.hash()).is_err());
        assert!(ReplayStore::new(dir.path(), 607).load(40, &x.hash()).unwrap_err().contains("not this test's"));
        // Overwritten by the attempt that gets there again.
        s.save(40, &y).unwrap();
        assert_eq!(s.load(40, &y.hash()).unwrap(), y);
        // Any flipped bit, and a truncated file, are caught.
        let path = dir.path().join(DIR).join("40.res");
        let good = std::fs::read(&path).unwrap();
        for i in [0, 9, 13, HEADER_LEN + 3, good.len() - 1] {
            let mut b = good.clone();
            b[i] ^= 0x10;
            std::fs::write(&path, &b).unwrap();
            assert!(s.load(40, &y.hash()).is_err(), "byte {i}");
        }
        std::fs::write(&path, &good[..good.len() / 2]).unwrap();
        assert!(s.load(40, &y.hash()).is_err());
        // A link to a device and a FIFO are refused at once, neither read nor waited on.
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        assert!(s.load(40, &y.hash()).unwrap_err().contains("a device"));
        std::fs::remove_file(&path).unwrap();
        if std::process::Command::new("mkfifo").arg(&path).status().is_ok_and(|st| st.success()) {
            assert!(s.load(40, &y.hash()).unwrap_err().contains("a FIFO"));
        }
    }
}
