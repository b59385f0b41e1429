//! A trace file: created and checked writable before the run, finished after it.

use crate::error::TraceError;
use crate::trace::{PREFIX, Trace};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// A trace file opened for writing.
///
/// [`TraceFile::create`] creates (or truncates) the file and writes the document's first
/// bytes at once, so that a path that cannot be written (a directory, `/dev/full`, no
/// permission) is refused before the run; [`TraceFile::finish`] writes the events.
///
/// # Example
/// ```
/// use hetlb_trace::{Trace, TraceFile};
/// let path = std::env::temp_dir().join(format!("hetlb-trace-doc-{}.json", std::process::id()));
/// let file = TraceFile::create(&path).unwrap();
/// let mut t = Trace::new(100);
/// t.process_name(0, "rank 0");
/// file.finish(&t).unwrap();
/// let text = std::fs::read_to_string(&path).unwrap();
/// hetlb_trace::check(&text).unwrap();
/// std::fs::remove_file(&path).unwrap();
/// assert!(TraceFile::create(std::env::temp_dir()).is_err()); // a directory
/// ```
#[derive(Debug)]
pub struct TraceFile {
    path: PathBuf,
    out: BufWriter<File>,
}

impl TraceFile {
    /// Creates the file at `path` and writes the document's first bytes.
    ///
    /// # Errors
    /// [`TraceError::Write`] naming the path when it cannot be created or written.
    pub fn create(path: impl AsRef<Path>) -> Result<Self, TraceError> {
        let path = path.as_ref().to_path_buf();
        let err = |source| TraceError::Write {
            path: path.display().to_string(),
            source,
        };
        if path.is_dir() {
            return Err(err(std::io::Error::other("it is a directory")));
        }
        let mut file = File::create(&path).map_err(err)?;
        file.write_all(PREFIX.as_bytes())
            .and_then(|()| file.flush())
            .map_err(err)?;
        Ok(Self {
            out: BufWriter::new(file),
            path,
        })
    }

    /// The path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `trace`'s events and closes the file.
    ///
    /// # Errors
    /// [`TraceError::Write`] when writing fails (the device filled up …).
    pub fn finish(mut self, trace: &Trace) -> Result<(), TraceError> {
        trace
            .write_body(&mut self.out)
            .and_then(|()| self.out.get_ref().sync_data().or(Ok(())))
            .map_err(|source| TraceError::Write {
                path: self.path.display().to_string(),
                source,
            })
    }
}
