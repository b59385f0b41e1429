//! Traces of what the balancer did, in the Trace Event format: the JSON that
//! [Perfetto's UI](https://ui.perfetto.dev) and `chrome://tracing` open.
//!
//! A trace has one process per rank (named by metadata events), spans (`X`) for compute
//! steps, rebalance calls and their phases (gather, decide, move, agree), counter tracks
//! (`C`) for each rank's load and speed and for the global imbalance, flow events (`s` → `f`)
//! from sender to receiver for every transfer, and instant events (`i`) for decisions held
//! back and for faults.
//!
//! - [`Trace`]: the bounded buffer every face records into (past its event limit, counter
//!   samples are thinned and other events dropped; the file says so in `otherData`).
//! - [`TraceFile`]: a file opened (and checked writable) before the run, finished after it.
//! - [`check`]: the format check (required fields, spans nested per thread, flows paired);
//!   [`check_part`] for one rank's part.
//! - [`merge`]: one trace from per-rank parts.
//! - [`report`]: one self-contained HTML page from a trace or a run's JSON.
//!
//! # Example
//! ```
//! use hetlb_trace::{Trace, Span};
//! let mut t = Trace::new(1000);
//! t.process_name(0, "rank 0");
//! t.span(Span::new(0, 0, "rebalance", 10.0, 5.0));
//! t.counter(0, "load", 10.0, "units", 42.0);
//! let text = t.to_json_string();
//! let summary = hetlb_trace::check(&text).unwrap();
//! assert_eq!(summary.spans, 1);
//! ```

mod check;
mod error;
mod event;
mod file;
mod merge;
pub mod report;
mod trace;

pub use check::{Summary, check, check_part};
pub use error::TraceError;
pub use event::{Event, Phase, Span};
pub use file::TraceFile;
pub use merge::merge;
pub use trace::{DEFAULT_EVENT_LIMIT, EVENT_BYTES, Trace};
