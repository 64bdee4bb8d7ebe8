//! The signing-key file and public keys given as text.
//!
//! Key file format: exactly 64 hexadecimal digits (the 32-byte Ed25519 secret seed; written in
//! lower case, upper case accepted), optionally followed by one `\n`. Anything else (other
//! lengths, spaces, `\r\n`, a second line) is refused, and a refused file is never overwritten.
//! A key created here lives at `<config dir>/mersenne-cert/signing.key` with mode 0600 in a
//! directory created with mode 0700, and is written atomically (temporary file, fsync, link into
//! place), so a crash or a concurrent first run never leaves a torn or replaced key.

use super::CertError;
use ed25519_dalek::{SigningKey, VerifyingKey};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Longest key file we read: 64 digits and a newline (anything longer is malformed anyway).
const KEY_FILE_MAX: u64 = 65;

/// `<config dir>/mersenne-cert/signing.key`, e.g. `~/.config/mersenne-cert/signing.key` on Linux.
pub fn default_key_path() -> Result<PathBuf, CertError> {
    let dir = dirs::config_dir().ok_or(CertError::NoConfigDir)?;
    Ok(dir.join("mersenne-cert").join("signing.key"))
}

/// The signing key, the path it came from, and whether it was created now.
///
/// With `Some(path)` the file must exist and hold a valid key; it is never created. With `None`
/// the default path is used, and a new key (32 bytes from the OS random source) is created there
/// on first use.
pub fn load_or_create(path: Option<&Path>) -> Result<(SigningKey, PathBuf, bool), CertError> {
    match path {
        Some(path) => Ok((load(path)?, path.to_path_buf(), false)),
        None => {
            let path = default_key_path()?;
            let (key, created) = load_or_create_at(&path)?;
            Ok((key, path, created))
        }
    }
}

/// Parse a public key given as 64 hex digits (surrounding whitespace ignored), as for
/// `verify --trust`; the bytes must be a valid Ed25519 public key.
pub fn parse_public_key_hex(s: &str) -> Result<[u8; 32], CertError> {
    let s = s.trim();
    if s.len() != 64 {
        return Err(CertError::PublicKeyHex(format!("expected 64 hex digits, got {} characters", s.chars().count())));
    }
    let mut key = [0u8; 32];
    hex::decode_to_slice(s, &mut key).map_err(|e| CertError::PublicKeyHex(format!("not hex: {e}")))?;
    VerifyingKey::from_bytes(&key).map_err(|_| CertError::PublicKeyHex("not a valid Ed25519 public key".into()))?;
    Ok(key)
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> CertError + '_ {
    move |source| CertError::KeyIo { path: path.to_path_buf(), source }
}

/// Read and parse an existing key file: a regular file (a FIFO or a device is refused without
/// waiting on it).
fn load(path: &Path) -> Result<SigningKey, CertError> {
    let text = crate::fsutil::read_regular(path, KEY_FILE_MAX).map_err(|e| match e.kind() {
        io::ErrorKind::FileTooLarge => CertError::KeyFile {
            path: path.to_path_buf(),
            why: format!(
                "malformed: expected 64 hex digits and an optional newline, found more than {KEY_FILE_MAX} bytes"
            ),
        },
        _ => io_err(path)(e),
    })?;
    parse_key_file(&text).map_err(|why| CertError::KeyFile { path: path.to_path_buf(), why })
}

/// The secret seed in a key file's contents. Error messages never echo the contents.
fn parse_key_file(text: &[u8]) -> Result<SigningKey, String> {
    let digits = text.strip_suffix(b"\n").unwrap_or(text);
    if digits.len() != 64 {
        return Err(format!("malformed: expected 64 hex digits and an optional newline, found {} bytes", text.len()));
    }
    let mut seed = [0u8; 32];
    hex::decode_to_slice(digits, &mut seed)
        .map_err(|_| "malformed: expected 64 hex digits and an optional newline".to_string())?;
    Ok(SigningKey::from_bytes(&seed))
}

/// Load the key at `path`, or create it there when the file does not exist.
fn load_or_create_at(path: &Path) -> Result<(SigningKey, bool), CertError> {
    match fs::metadata(path) {
        Ok(_) => return Ok((load(path)?, false)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_err(path)(e)),
    }
    let mut seed = [0u8; 32];
    random(path, &mut seed)?;
    let key = SigningKey::from_bytes(&seed);
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    create_private_dir(dir).map_err(io_err(dir))?;

    let mut nonce = [0u8; 8];
    random(path, &mut nonce)?;
    let tmp = dir.join(format!(".signing.key.{}.{}.tmp", std::process::id(), hex::encode(nonce)));
    let result = write_new_file(&tmp, format!("{}\n", hex::encode(seed)).as_bytes()).and_then(|()| {
        // A hard link never replaces an existing file, unlike rename; fall back to rename only
        // on file systems without hard links.
        match fs::hard_link(&tmp, path) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => fs::rename(&tmp, path),
            linked => linked,
        }
    });
    let _ = fs::remove_file(&tmp);
    match result {
        Ok(()) => {
            sync_dir(dir).map_err(io_err(dir))?;
            Ok((key, true))
        }
        // Another process created the key first: use that one.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok((load(path)?, false)),
        Err(e) => Err(io_err(path)(e)),
    }
}

fn random(path: &Path, buf: &mut [u8]) -> Result<(), CertError> {
    getrandom::getrandom(buf).map_err(|e| CertError::KeyFile {
        path: path.to_path_buf(),
        why: format!("no randomness from the operating system: {e}"),
    })
}

/// Create a file that must not exist yet, readable by the owner only, write and fsync it.
fn write_new_file(path: &Path, contents: &[u8]) -> io::Result<()> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(contents)?;
    file.sync_all()
}

fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Make the new directory entry durable (fsync of the directory; a no-op outside Unix).
fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    fs::File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn created_once_then_loaded() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("config").join("mersenne-cert").join("signing.key");
        let (key, created) = load_or_create_at(&path).unwrap();
        assert!(created);
        #[cfg(unix)]
        {
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(path.parent().unwrap()), 0o700);
        }
        let text = fs::read_to_string(&path).unwrap();
        assert_eq!(text, format!("{}\n", hex::encode(key.to_bytes())));
        // Only the key file is left in the directory (the temporary file is gone).
        assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), 1);

        let (again, created) = load_or_create_at(&path).unwrap();
        assert!(!created);
        assert_eq!(again.to_bytes(), key.to_bytes());
        let (explicit, p, created) = load_or_create(Some(&path)).unwrap();
        assert_eq!((explicit.to_bytes(), p, created), (key.to_bytes(), path.clone(), false));

        // Two different directories get two different keys.
        let (other, _) = load_or_create_at(&tmp.path().join("other").join("signing.key")).unwrap();
        assert_ne!(other.to_bytes(), key.to_bytes());
    }

    #[test]
    fn accepted_spellings() {
        let seed = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
        for text in [seed.to_string(), format!("{seed}\n"), seed.to_uppercase()] {
            let key = parse_key_file(text.as_bytes()).unwrap();
            assert_eq!(hex::encode(key.to_bytes()), seed);
        }
        // RFC 8032 test vector 1: this seed has this public key.
        assert_eq!(
            hex::encode(parse_key_file(seed.as_bytes()).unwrap().verifying_key().as_bytes()),
            "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
        );
    }

    #[test]
    fn malformed_files_are_refused_and_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let seed = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
        let bad: Vec<Vec<u8>> = vec![
            Vec::new(),
            b"\n".to_vec(),
            seed[..63].into(),
            format!("{seed}0").into(),
            format!("{seed}\r\n").into(),
            format!("{seed}\n\n").into(),
            format!(" {seed}").into(),
            format!("{seed}\nsecond line\n").into(),
            seed.replace('9', "g").into(),
            vec![b'0'; 100_000],
            [&seed.as_bytes()[..62], "é".as_bytes()].concat(),
        ];
        for (i, contents) in bad.iter().enumerate() {
            let path = tmp.path().join(format!("bad{i}.key"));
            fs::write(&path, contents).unwrap();
            let e = load_or_create(Some(&path)).unwrap_err();
            assert!(matches!(e, CertError::KeyFile { .. }), "{i}: {e}");
            assert!(e.to_string().contains("malformed"), "{e}");
            assert!(!e.to_string().contains(&seed[..16]), "error echoes the secret: {e}");
            assert!(load_or_create_at(&path).is_err());
            assert_eq!(&fs::read(&path).unwrap(), contents, "malformed file {i} was changed");
        }
    }

    #[test]
    fn explicit_path_is_never_created() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("missing.key");
        let e = load_or_create(Some(&path)).unwrap_err();
        assert!(matches!(&e, CertError::KeyIo { source, .. } if source.kind() == io::ErrorKind::NotFound), "{e}");
        assert!(!path.exists());
        // A directory where the key should be is an error too, not a reason to create anything.
        assert!(load_or_create(Some(tmp.path())).is_err());
        assert!(load_or_create_at(tmp.path()).is_err());
    }

    #[test]
    fn public_keys_from_hex() {
        let vk = SigningKey::from_bytes(&[7; 32]).verifying_key();
        let text = hex::encode(vk.as_bytes());
        assert_eq!(parse_public_key_hex(&text).unwrap(), vk.to_bytes());
        assert_eq!(parse_public_key_hex(&format!("  {}\n", text.to_uppercase())).unwrap(), vk.to_bytes());
        for bad in ["", &text[..62], &format!("{text}00"), &text.replace(|c: char| c.is_ascii_digit(), "x")] {
            assert!(matches!(parse_public_key_hex(bad), Err(CertError::PublicKeyHex(_))), "{bad:?}");
        }
        // Some 32-byte strings are not points on the curve.
        let not_a_point = (0u8..=255)
            .map(|i| {
                let mut b = [0u8; 32];
                b[0] = i;
                b[1] = 1;
                b
            })
            .find(|b| VerifyingKey::from_bytes(b).is_err())
            .unwrap();
        let e = parse_public_key_hex(&hex::encode(not_a_point)).unwrap_err();
        assert!(e.to_string().contains("not a valid Ed25519 public key"), "{e}");
    }
}
