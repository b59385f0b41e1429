//! The format check: what Perfetto's and chrome://tracing's importers need of a trace.

use crate::error::TraceError;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What a checked trace holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Summary {
    /// Events in `traceEvents`.
    pub events: usize,
    /// Processes (ranks) that have events.
    pub processes: usize,
    /// Spans (`X`, and `B`/`E` pairs).
    pub spans: usize,
    /// Counter samples.
    pub counters: usize,
    /// Flows (arrows) with both ends.
    pub flows: usize,
    /// Instants.
    pub instants: usize,
    /// Events the writer dropped past its limit (`otherData.events_dropped`).
    pub dropped: u64,
}

/// Slack for spans recorded from clocks read at different points, in microseconds.
const SLACK_US: f64 = 0.01;

/// Reads `text` as JSON, naming the byte where it stops being JSON.
pub(crate) fn parse(text: &str) -> Result<Value, TraceError> {
    serde_json::from_str(text).map_err(|e| TraceError::json(text, &e))
}

/// Checks `text` against the Trace Event format as hetlb writes it: a JSON object with
/// `traceEvents` (or a bare array of events); every event has `ph`, `ts`, `pid`, `tid` and
/// `name` (an `E` may leave out its name), a span's duration is a number ≥ 0, `B`/`E` match
/// per thread and `X` spans nest or are disjoint per thread, every counter's arguments are
/// numbers, and flow ids are paired `s` → `f` (unless the writer dropped events past its
/// limit).
///
/// # Errors
/// [`TraceError::Json`] naming the byte where the text stops being JSON;
/// [`TraceError::Format`] naming the first event at fault.
///
/// # Example
/// ```
/// let bad = r#"{"traceEvents":[{"ph":"X","ts":0,"pid":0,"tid":0}]}"#;
/// let e = hetlb_trace::check(bad).unwrap_err();
/// assert_eq!(e.to_string(), "event 0: no \"name\"");
/// ```
pub fn check(text: &str) -> Result<Summary, TraceError> {
    check_with(text, true)
}

/// [`check`] for one rank's part of a trace (`NAME.rankR.json`): the same, except that a
/// flow may start or end in another part (its pairs are checked once the parts are merged).
///
/// # Errors
/// As [`check`].
///
/// # Example
/// ```
/// let part = r#"{"traceEvents":[{"ph":"f","ts":5,"pid":1,"tid":0,"name":"transfer","id":7,"bp":"e"}]}"#;
/// assert!(hetlb_trace::check(part).is_err());
/// assert_eq!(hetlb_trace::check_part(part).unwrap().flows, 0);
/// ```
pub fn check_part(text: &str) -> Result<Summary, TraceError> {
    check_with(text, false)
}

/// The check, with or without the flows' pairing.
fn check_with(text: &str, paired: bool) -> Result<Summary, TraceError> {
    let doc = parse(text)?;
    let (events, other) = match &doc {
        Value::Array(a) => (a, None),
        Value::Object(m) => match m.get("traceEvents") {
            Some(Value::Array(a)) => (a, m.get("otherData").and_then(Value::as_object)),
            _ => {
                return Err(TraceError::format(
                    None,
                    "no \"traceEvents\" array: not a trace in the Trace Event format",
                ));
            }
        },
        _ => return Err(TraceError::format(None, "neither an object nor an array")),
    };
    let dropped = other
        .and_then(|m| m.get("events_dropped"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let mut checker = Checker::default();
    for (i, e) in events.iter().enumerate() {
        checker
            .event(e)
            .map_err(|reason| TraceError::format(Some(i), reason))?;
    }
    checker.finish(if paired { Some(dropped) } else { None })
}

/// What the check keeps between events.
#[derive(Default)]
struct Checker {
    summary: Summary,
    pids: BTreeSet<u64>,
    /// Open `B` spans per thread: (name, index).
    open: HashMap<(u64, u64), Vec<String>>,
    /// `X` spans per thread: (start, end).
    complete: HashMap<(u64, u64), Vec<(f64, f64)>>,
    flow_starts: BTreeSet<u64>,
    flow_ends: BTreeMap<u64, usize>,
    index: usize,
}

fn number(m: &Map<String, Value>, key: &str) -> Result<f64, String> {
    match m.get(key) {
        Some(v) => v
            .as_f64()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("\"{key}\" is not a number")),
        None => Err(format!("no \"{key}\"")),
    }
}

fn whole(m: &Map<String, Value>, key: &str) -> Result<u64, String> {
    match m.get(key) {
        Some(v) => v
            .as_u64()
            .ok_or_else(|| format!("\"{key}\" is not a whole number")),
        None => Err(format!("no \"{key}\"")),
    }
}

impl Checker {
    fn event(&mut self, e: &Value) -> Result<(), String> {
        self.index += 1;
        let m = e.as_object().ok_or("not an object")?;
        let ph = match m.get("ph") {
            Some(Value::String(s)) => s.as_str(),
            Some(_) => return Err("\"ph\" is not a string".into()),
            None => return Err("no \"ph\"".into()),
        };
        let name = match m.get("name") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err("\"name\" is not a string".into()),
            None if ph == "E" => None,
            None => return Err("no \"name\"".into()),
        };
        let ts = number(m, "ts")?;
        let (pid, tid) = (whole(m, "pid")?, whole(m, "tid")?);
        self.summary.events += 1;
        if ph != "M" {
            self.pids.insert(pid);
        }
        match ph {
            "X" => {
                let dur = number(m, "dur")?;
                if dur < 0.0 {
                    return Err(format!("\"dur\" is negative ({dur})"));
                }
                self.complete
                    .entry((pid, tid))
                    .or_default()
                    .push((ts, ts + dur));
            }
            "B" => self
                .open
                .entry((pid, tid))
                .or_default()
                .push(name.unwrap_or_default()),
            "E" => {
                let top = self.open.get_mut(&(pid, tid)).and_then(Vec::pop);
                match (top, name) {
                    (None, _) => {
                        return Err(format!(
                            "an \"E\" with no open \"B\" on pid {pid} tid {tid}"
                        ));
                    }
                    (Some(b), Some(n)) if b != n => {
                        return Err(format!(
                            "\"E\" of '{n}' closes '{b}' on pid {pid} tid {tid}"
                        ));
                    }
                    _ => self.summary.spans += 1,
                }
            }
            "C" => {
                let args = m
                    .get("args")
                    .and_then(Value::as_object)
                    .ok_or("a counter without \"args\"")?;
                if let Some((k, _)) = args.iter().find(|(_, v)| !v.is_number()) {
                    return Err(format!("counter series '{k}' is not a number"));
                }
                self.summary.counters += 1;
            }
            "i" | "I" => self.summary.instants += 1,
            "s" | "f" | "t" => {
                let id = match m.get("id") {
                    Some(Value::Number(n)) => n.as_u64().ok_or("\"id\" is not a whole number")?,
                    Some(Value::String(s)) => fnv(s),
                    _ => return Err("a flow event without \"id\"".into()),
                };
                if ph == "s" {
                    if !self.flow_starts.insert(id) {
                        return Err(format!("flow id {id} starts twice"));
                    }
                } else if ph == "f" {
                    self.flow_ends.insert(id, self.index - 1);
                }
            }
            "M" => {}
            other => return Err(format!("phase '{other}' is not one hetlb writes or reads")),
        }
        Ok(())
    }

    /// The checks at the end; `dropped`: events the writer dropped (`None`: a part, whose
    /// flows are not checked for pairs).
    fn finish(mut self, dropped: Option<u64>) -> Result<Summary, TraceError> {
        let strict = dropped == Some(0);
        if let Some(((pid, tid), names)) = self.open.iter().find(|(_, v)| !v.is_empty()) {
            return Err(TraceError::format(
                None,
                format!(
                    "span '{}' on pid {pid} tid {tid} begins but never ends",
                    names[0]
                ),
            ));
        }
        for ((pid, tid), spans) in &mut self.complete {
            self.summary.spans += spans.len();
            spans.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
            let mut stack: Vec<f64> = Vec::new();
            for &(start, end) in spans.iter() {
                while stack.last().is_some_and(|&top| top <= start + SLACK_US) {
                    stack.pop();
                }
                if let Some(&top) = stack.last()
                    && end > top + SLACK_US
                {
                    return Err(TraceError::format(
                        None,
                        format!(
                            "spans on pid {pid} tid {tid} overlap without nesting (one ends at {top} µs, \
                                 one from {start} to {end} µs)"
                        ),
                    ));
                }
                stack.push(end);
            }
        }
        for (&id, &i) in &self.flow_ends {
            if self.flow_starts.contains(&id) {
                self.summary.flows += 1;
            } else if strict {
                return Err(TraceError::format(
                    Some(i),
                    format!("flow id {id} ends but never starts"),
                ));
            }
        }
        if strict
            && let Some(id) = self
                .flow_starts
                .iter()
                .find(|id| !self.flow_ends.contains_key(id))
        {
            return Err(TraceError::format(
                None,
                format!("flow id {id} starts but never ends"),
            ));
        }
        self.summary.processes = self.pids.len();
        self.summary.dropped = dropped.unwrap_or(0);
        Ok(self.summary)
    }
}

/// A string id as a number (FNV-1a).
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
