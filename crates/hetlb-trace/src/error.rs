//! What can go wrong with a trace.

use thiserror::Error;

/// A trace that cannot be written, read or checked.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The file cannot be created or written (a directory, a full device, no permission).
    #[error("cannot write the trace '{path}': {source}")]
    Write {
        /// The path given.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The text is not JSON, or ends early: `byte` is where reading stopped.
    #[error("not a JSON document at byte {byte} (line {line}, column {column}): {reason}")]
    Json {
        /// Offset of the offending byte.
        byte: usize,
        /// Its line (from 1).
        line: usize,
        /// Its column (from 1).
        column: usize,
        /// What the reader found.
        reason: String,
    },
    /// The JSON is not a trace in the Trace Event format: `event` is the index in
    /// `traceEvents` (when one event is at fault).
    #[error("{}{reason}", event.map_or(String::new(), |i| format!("event {i}: ")))]
    Format {
        /// The offending event's index.
        event: Option<usize>,
        /// What is wrong.
        reason: String,
    },
}

impl TraceError {
    /// A JSON error of `text`, with the byte offset of its line and column.
    pub(crate) fn json(text: &str, e: &serde_json::Error) -> Self {
        let (line, column) = (e.line(), e.column());
        let byte = text
            .split_inclusive('\n')
            .take(line.saturating_sub(1))
            .map(str::len)
            .sum::<usize>()
            + column.saturating_sub(1);
        let reason = e.to_string();
        let reason = reason
            .split(" at line ")
            .next()
            .unwrap_or(&reason)
            .to_string();
        Self::Json {
            byte: byte.min(text.len()),
            line,
            column,
            reason,
        }
    }

    /// A format error of event `event`.
    pub(crate) fn format(event: Option<usize>, reason: impl Into<String>) -> Self {
        Self::Format {
            event,
            reason: reason.into(),
        }
    }
}
