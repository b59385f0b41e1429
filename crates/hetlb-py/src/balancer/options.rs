//! A balancer's configuration from Python: the rule, and the options as `(name, text)` pairs
//! set one by one through the library's options table (`hetlb_peer::options`: names,
//! values, defaults and bounds live there, and `hetlb options` prints them). Nothing is
//! checked here; an error names the option as its Python keyword
//! ([`crate::errors::keyword`]).

use crate::errors::{InvalidTypeError, Result};
use hetlb_peer::BalancerConfig;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The configuration of `rule` with `options` (a sequence of `(name, text)` pairs, or a dict
/// of them), set in order with `BalancerConfig::set`. With the feature `fault-injection`,
/// the name `fault` sets a fault to inject ([`parse_fault`]).
///
/// # Errors
/// `InvalidTypeError` for options that are not pairs of strings; the library's errors for
/// an unknown rule or option, or a value refused.
pub fn configure(rule: &str, options: Option<&Bound<'_, PyAny>>) -> Result<BalancerConfig> {
    let mut config = BalancerConfig::new(rule)?;
    for (name, text) in pairs(options)? {
        #[cfg(feature = "fault-injection")]
        if name == "fault" {
            config = config.fault(parse_fault(&text)?);
            continue;
        }
        config = config.set(&name, &text)?;
    }
    Ok(config)
}

/// The `(name, text)` pairs of `options`, in order.
fn pairs(options: Option<&Bound<'_, PyAny>>) -> Result<Vec<(String, String)>> {
    let Some(options) = options else {
        return Ok(Vec::new());
    };
    let extracted = match options.cast::<PyDict>() {
        Ok(dict) => dict.items().extract::<Vec<(String, String)>>(),
        Err(_) => options.extract::<Vec<(String, String)>>(),
    };
    extracted.map_err(|e| {
        InvalidTypeError::new_err(format!(
            "options: expected (name, text) pairs of strings or a dict of them ({e})"
        ))
        .into()
    })
}

/// A fault to inject (tests and demonstrations): `leave-after-sends:K` (give the call up
/// after sending `K` item messages, as a rank that hits an error of its own) or
/// `leave-after-vote`.
///
/// # Errors
/// `InvalidInputError` naming `fault` for anything else.
#[cfg(feature = "fault-injection")]
pub fn parse_fault(text: &str) -> Result<hetlb_peer::Fault> {
    use hetlb_peer::Fault;
    if text == "leave-after-vote" {
        return Ok(Fault::LeaveAfterVote);
    }
    text.strip_prefix("leave-after-sends:")
        .and_then(|k| k.parse().ok())
        .map(Fault::LeaveAfterSends)
        .ok_or_else(|| {
            crate::errors::InvalidInputError::new_err(format!(
                "fault: '{text}' is not leave-after-sends:K or leave-after-vote"
            ))
            .into()
        })
}
