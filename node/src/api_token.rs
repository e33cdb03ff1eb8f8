//! The local API token: 32 random bytes, hex-encoded, in `<data>/api-token`
//! (mode 0600), made by the first server on a data folder and kept across
//! restarts. Whoever can read the data folder can use the `/v1/` API (the
//! CLI reads the file); a process that merely shares the machine cannot.
//!
//! The token is a [`Secret`]: never printed, compared in constant time.

use std::path::Path;

use crate::config::Secret;

/// The token file, relative to the data folder (the only way errors and
/// answers name it: no absolute path leaves the node).
pub const TOKEN_FILE: &str = "api-token";

/// Random bytes in a token.
const TOKEN_BYTES: usize = 32;

/// Reads the token of `data_dir`, making one first if there is none.
pub fn load_or_create(data_dir: &Path) -> std::io::Result<Secret> {
    if let Some(token) = read(data_dir)? {
        return Ok(token);
    }
    // rand's thread generator is a CSPRNG seeded from the OS.
    let text = hex::encode(rand::random::<[u8; TOKEN_BYTES]>());
    crate::data_lock::write_private(&data_dir.join(TOKEN_FILE), format!("{text}\n").as_bytes())?;
    Ok(Secret::new(text))
}

/// The token of `data_dir`; `None` when there is no token file yet. A file
/// that holds no token (empty, or not text) is an error: it is not replaced
/// silently, since clients may hold the old token.
pub fn read(data_dir: &Path) -> std::io::Result<Option<Secret>> {
    let text = match std::fs::read_to_string(data_dir.join(TOKEN_FILE)) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let token = text.trim();
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{TOKEN_FILE} in the data folder holds no token; delete it and restart the server for a new one"
            ),
        ));
    }
    Ok(Some(Secret::new(token)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_made_once_private_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read(dir.path()).unwrap().is_none());
        let first = load_or_create(dir.path()).unwrap();
        assert_eq!(first.expose().len(), 2 * TOKEN_BYTES);
        assert!(first.expose().bytes().all(|b| b.is_ascii_hexdigit()));
        let again = load_or_create(dir.path()).unwrap();
        assert_eq!(first, again, "kept across restarts");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(dir.path().join(TOKEN_FILE)).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let other = tempfile::tempdir().unwrap();
        assert_ne!(load_or_create(other.path()).unwrap(), first, "random per folder");
    }

    #[test]
    fn an_empty_token_file_is_an_error_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(TOKEN_FILE), "\n").unwrap();
        let e = load_or_create(dir.path()).unwrap_err();
        assert!(e.to_string().contains("api-token"), "{e}");
        assert_eq!(std::fs::read_to_string(dir.path().join(TOKEN_FILE)).unwrap(), "\n");
    }
}
