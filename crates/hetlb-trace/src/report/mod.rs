//! `hetlb report`: one self-contained HTML page (its script, styles and data inline; no
//! network needed to view it) from a trace or from a run's JSON.
//!
//! The page shows the imbalance over time, every rank's load over time (ranks grouped into
//! bands beyond what a screen holds: mean, min and max of each band), a rank × step heat
//! map, each rank's utilisation over time, the migrations as a rank × rank matrix and as arcs between ranks, the trigger's
//! predicted gain against the move's cost at every decision, the time per iteration of each
//! balancer (a run's JSON), and a scenario's simulated against measured finishing times.
//!
//! # Example
//! ```
//! use hetlb_trace::{Span, Trace};
//! let mut t = Trace::new(1000);
//! for r in 0..4 {
//!     t.process_name(r, &format!("rank {r}"));
//!     t.counter(r, "load", 0.0, "units", (10 * (r + 1)) as f64);
//!     t.span(Span::new(r, 1, "compute", 0.0, 5.0));
//! }
//! let page = hetlb_trace::report::html(&t.to_json_string(), "run.json").unwrap();
//! assert!(page.starts_with("<!DOCTYPE html>") && page.contains("id=\"chart-load\""));
//! assert!(!page.contains("src=\"http") && !page.contains("href=\"http")); // nothing fetched
//! ```

mod from_run;
mod from_trace;
mod grid;
mod model;
mod page;

pub use model::{Bands, Decision, Heat, Line, Matrix, Model, Scenario};

use crate::error::TraceError;
use serde_json::Value;

/// The model of the page for `text`: a trace (an object with `traceEvents`, or a bare array
/// of events), the JSON of `hetlb run iterative --format json` (`balancers`) or of `hetlb run
/// scenario --compare --format json` (`simulated` and `measured`).
///
/// # Errors
/// [`TraceError::Json`] naming the byte where the text stops being JSON (a truncated file);
/// [`TraceError::Format`] naming the event at fault, or saying what the input is not.
pub fn model(text: &str, name: &str) -> Result<Model, TraceError> {
    let doc: Value = crate::check::parse(text)?;
    let is_trace = doc.is_array() || doc.get("traceEvents").is_some();
    if is_trace {
        crate::check::check(text)?;
        return Ok(from_trace::model(&doc, name));
    }
    if doc.get("balancers").is_some_and(Value::is_array) {
        return from_run::iterative(&doc, name);
    }
    if doc.get("simulated").is_some() && doc.get("measured").is_some() {
        return from_run::scenario(&doc, name);
    }
    Err(TraceError::Format {
        event: None,
        reason: "neither a trace (traceEvents) nor the JSON of hetlb run iterative (balancers) \
                 or of hetlb run scenario --compare (simulated, measured)"
            .into(),
    })
}

/// The HTML page for `text` (see [`model`]); `name` titles it.
///
/// # Errors
/// As [`model`].
pub fn html(text: &str, name: &str) -> Result<String, TraceError> {
    Ok(page::render(&model(text, name)?))
}
