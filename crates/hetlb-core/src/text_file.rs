//! The one reader of the text files hetlb takes as input (graphs, scenarios, loads): regular
//! files only, of a bounded size.
//!
//! Anything but a regular file is refused before it is opened — a FIFO (opening it would wait
//! for a writer forever), a device (`/dev/zero` never ends), a directory — and a file larger
//! than the bound is refused before it is read, so no input can block or exhaust the memory.

use std::io::Read;
use std::path::Path;
use thiserror::Error;

/// The largest text file read by default, in bytes (1 GiB).
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// Why a text file was not read.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ReadError {
    /// Not a regular file.
    #[error("it is {0}; hetlb reads regular files only")]
    NotRegular(&'static str),
    /// Larger than the bound.
    #[error("it is {bytes} bytes, larger than the {max} bytes read")]
    TooLarge {
        /// Its size.
        bytes: u64,
        /// The bound.
        max: u64,
    },
    /// The operating system's error (shown as it is, so that a chain of causes names it once).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// What `path` is, when it is not a regular file.
fn kind_of(meta: &std::fs::Metadata) -> Option<&'static str> {
    let kind = meta.file_type();
    if kind.is_file() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return Some("a FIFO (a named pipe)");
        }
        if kind.is_char_device() || kind.is_block_device() {
            return Some("a device");
        }
        if kind.is_socket() {
            return Some("a socket");
        }
    }
    Some(if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    })
}

/// Opens `path` if it is a regular file of at most `max` bytes; returns it with its size.
///
/// # Errors
/// [`ReadError`]: not a regular file, too large, or the system's error.
pub fn open_regular(path: &Path, max: u64) -> Result<(std::fs::File, u64), ReadError> {
    let meta = std::fs::metadata(path)?;
    if let Some(what) = kind_of(&meta) {
        return Err(ReadError::NotRegular(what));
    }
    if meta.len() > max {
        return Err(ReadError::TooLarge {
            bytes: meta.len(),
            max,
        });
    }
    Ok((std::fs::File::open(path)?, meta.len()))
}

/// Reads the regular text file `path` of at most `max` bytes; a leading UTF-8 byte-order mark
/// is dropped.
///
/// # Errors
/// [`ReadError`]: not a regular file, too large (also when it grew while being read), not
/// UTF-8, or the system's error.
///
/// # Example
/// ```
/// use hetlb_core::text_file::{read_text, ReadError};
/// let dir = std::env::temp_dir().join(format!("hetlb-text-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let p = dir.join("g.txt");
/// std::fs::write(&p, "\u{feff}0 1\n").unwrap();
/// assert_eq!(read_text(&p, 100).unwrap(), "0 1\n");
/// assert!(matches!(read_text(&p, 2), Err(ReadError::TooLarge { .. })));
/// assert!(matches!(read_text(&dir, 100), Err(ReadError::NotRegular(_))));
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn read_text(path: &Path, max: u64) -> Result<String, ReadError> {
    let (file, _) = open_regular(path, max)?;
    let mut text = String::new();
    file.take(max.saturating_add(1)).read_to_string(&mut text)?;
    if text.len() as u64 > max {
        return Err(ReadError::TooLarge {
            bytes: text.len() as u64,
            max,
        });
    }
    if let Some(rest) = text.strip_prefix('\u{feff}') {
        text = rest.to_string();
    }
    Ok(text)
}
