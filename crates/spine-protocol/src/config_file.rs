//! Bounded reading of configuration files named by path (settings files, `.mcp.json`).
//!
//! Contract of [`read_config_file`]:
//! - The file is opened `O_RDONLY | O_NONBLOCK`, so a FIFO opens at once instead of waiting for
//!   a writer, and what was opened is checked **by its descriptor** (`fstat`): only a regular
//!   file is read. A FIFO, socket or device (`/dev/zero`, a terminal) is refused without reading
//!   a byte; so is a directory.
//! - At most `cap` bytes are read ([`CONFIG_FILE_CAP`] for the callers here): a file larger than
//!   that is refused (its size is checked before reading, and again while reading, in case it
//!   grows), so memory stays bounded whatever the path names.
//! - The text must be UTF-8.
//!
//! Errors say why in words meant to follow the file's name ("is a FIFO, not a regular file").
//!
//! The one file read of this crate: settings (`spine-settings`) and the engine (`spine-core`,
//! which re-exports this module as `spine_core::config_file`) read configuration the same way.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use rustix::fs::{FileType, Mode, OFlags};
use thiserror::Error;

/// The largest configuration file read: 4 MiB.
pub const CONFIG_FILE_CAP: u64 = 4 * 1024 * 1024;

/// Why a configuration file was not read.
#[derive(Debug, Error)]
pub enum ConfigFileError {
    /// Nothing at the path.
    #[error("cannot read: {0}")]
    NotFound(#[source] io::Error),
    /// Not a regular file.
    #[error("is {kind}, not a regular file; refusing to read it")]
    NotRegular {
        /// What it is ("a FIFO", "a directory", …).
        kind: &'static str,
    },
    /// Larger than the cap.
    #[error("is larger than {cap} bytes ({size} bytes); refusing to read it")]
    TooLarge {
        /// The most bytes a configuration file may have.
        cap: u64,
        /// The size seen (at least).
        size: u64,
    },
    /// Not UTF-8.
    #[error("cannot read: the file is not UTF-8 text")]
    NotUtf8,
    /// Any other I/O error.
    #[error("cannot read: {0}")]
    Io(#[source] io::Error),
}

impl ConfigFileError {
    /// Whether nothing exists at the path.
    pub fn is_not_found(&self) -> bool {
        matches!(self, ConfigFileError::NotFound(_))
    }
}

/// Reads a regular file of at most `cap` bytes as UTF-8 text (see the module contract).
pub fn read_config_file(path: &Path, cap: u64) -> Result<String, ConfigFileError> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let fd = rustix::fs::open(path, flags, Mode::empty()).map_err(|e| {
        let e = io::Error::from(e);
        if e.kind() == io::ErrorKind::NotFound { ConfigFileError::NotFound(e) } else { ConfigFileError::Io(e) }
    })?;
    let stat = rustix::fs::fstat(&fd).map_err(|e| ConfigFileError::Io(e.into()))?;
    let kind = match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => None,
        FileType::Directory => Some("a directory"),
        FileType::Fifo => Some("a FIFO"),
        FileType::Socket => Some("a socket"),
        FileType::CharacterDevice => Some("a character device"),
        FileType::BlockDevice => Some("a block device"),
        FileType::Symlink | FileType::Unknown => Some("not a plain file"),
    };
    if let Some(kind) = kind {
        return Err(ConfigFileError::NotRegular { kind });
    }
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    if size > cap {
        return Err(ConfigFileError::TooLarge { cap, size });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    File::from(fd).take(cap.saturating_add(1)).read_to_end(&mut bytes).map_err(ConfigFileError::Io)?;
    let read = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if read > cap {
        return Err(ConfigFileError::TooLarge { cap, size: read });
    }
    String::from_utf8(bytes).map_err(|_| ConfigFileError::NotUtf8)
}

/// The JSON type of a value with its article (`a string`, `an object`, `null`), for error
/// messages about configuration and arguments.
pub fn type_name(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_are_read_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.json");
        std::fs::write(&path, "{}").expect("write");
        assert_eq!(read_config_file(&path, CONFIG_FILE_CAP).expect("read"), "{}");
    }

    #[test]
    fn fifos_and_devices_are_refused_without_blocking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, Mode::from_raw_mode(0o600)).expect("mkfifo");
        let e = read_config_file(&fifo, CONFIG_FILE_CAP).expect_err("fifo");
        assert_eq!(e.to_string(), "is a FIFO, not a regular file; refusing to read it");
        let e = read_config_file(Path::new("/dev/zero"), CONFIG_FILE_CAP).expect_err("device");
        assert!(matches!(e, ConfigFileError::NotRegular { kind: "a character device" }), "{e}");
        let e = read_config_file(dir.path(), CONFIG_FILE_CAP).expect_err("directory");
        assert!(matches!(e, ConfigFileError::NotRegular { kind: "a directory" }), "{e}");
    }

    #[test]
    fn files_over_the_cap_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("big.json");
        std::fs::File::create(&path).expect("create").set_len(1 << 30).expect("set_len");
        let e = read_config_file(&path, CONFIG_FILE_CAP).expect_err("too large");
        assert!(matches!(e, ConfigFileError::TooLarge { cap: CONFIG_FILE_CAP, size: 1_073_741_824 }), "{e}");
    }

    #[test]
    fn a_missing_file_is_not_found() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(read_config_file(&dir.path().join("absent"), CONFIG_FILE_CAP).expect_err("missing").is_not_found());
    }
}
