//! One trace from per-rank parts.

use crate::error::TraceError;
use crate::trace::Trace;
use serde_json::Value;

/// Merges the traces `parts` (the JSON of each) into one bounded by `limit` events, aligning
/// their clocks: a part whose `otherData` gives `origin_unix_us` (the wall-clock time of its
/// zero) is shifted so that every part counts from the earliest origin.
///
/// # Errors
/// [`TraceError`] naming the part (its index) that is not a trace.
///
/// # Example
/// ```
/// use hetlb_trace::{Span, Trace, merge};
/// let part = |rank: u64, origin: f64| {
///     let mut t = Trace::new(100);
///     t.set_other("origin_unix_us", origin.into());
///     t.span(Span::new(rank, 0, "rebalance", 0.0, 1.0));
///     t.to_json_string()
/// };
/// let merged = merge(&[part(0, 1000.0), part(1, 1500.0)], 1000).unwrap();
/// let spans: Vec<f64> = merged.events().iter().map(|e| e.ts).collect();
/// assert_eq!(spans, vec![0.0, 500.0]);
/// ```
pub fn merge(parts: &[String], limit: usize) -> Result<Trace, TraceError> {
    let mut read = Vec::with_capacity(parts.len());
    for (i, text) in parts.iter().enumerate() {
        let t = Trace::from_json(text, limit).map_err(|e| TraceError::Format {
            event: None,
            reason: format!("part {i}: {e}"),
        })?;
        read.push(t);
    }
    let origin = |t: &Trace| t.other().get("origin_unix_us").and_then(Value::as_f64);
    let first = read.iter().filter_map(origin).fold(f64::INFINITY, f64::min);
    let mut out = Trace::new(limit);
    for t in read {
        let shift = match origin(&t) {
            Some(o) if first.is_finite() => o - first,
            _ => 0.0,
        };
        out.absorb(t, shift);
    }
    if first.is_finite() {
        out.set_other("origin_unix_us", first.into());
    }
    Ok(out)
}
