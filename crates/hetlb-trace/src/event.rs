//! One event of the Trace Event format.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An event's phase (its `ph`): the kinds a hetlb trace uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Phase {
    /// A span with its duration (`X`).
    #[serde(rename = "X")]
    Complete,
    /// The start of a span (`B`).
    #[serde(rename = "B")]
    Begin,
    /// The end of a span (`E`).
    #[serde(rename = "E")]
    End,
    /// A counter sample (`C`): `args` holds the series' values.
    #[serde(rename = "C")]
    Counter,
    /// An instant (`i`).
    #[serde(rename = "i")]
    Instant,
    /// The start of a flow (`s`), an arrow's tail.
    #[serde(rename = "s")]
    FlowStart,
    /// The end of a flow (`f`), an arrow's head.
    #[serde(rename = "f")]
    FlowEnd,
    /// Metadata (`M`): process and thread names.
    #[serde(rename = "M")]
    Metadata,
}

/// One event: what a viewer reads from each element of `traceEvents`.
///
/// Times are microseconds from the trace's origin.
///
/// # Example
/// ```
/// use hetlb_trace::{Event, Phase};
/// let e = Event::new(Phase::Instant, 2, 0, "held back", 1.5);
/// let json = serde_json::to_string(&e).unwrap();
/// assert!(json.contains(r#""ph":"i""#) && json.contains(r#""pid":2"#));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// The event's name (the span's label, the counter track's name …).
    pub name: String,
    /// Its category (`compute`, `balance`, `move`, `fault` …).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub cat: String,
    /// Its phase.
    pub ph: Phase,
    /// Microseconds from the origin.
    pub ts: f64,
    /// A span's duration in microseconds (`X` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dur: Option<f64>,
    /// The process: the rank.
    pub pid: u64,
    /// The thread within the rank.
    pub tid: u64,
    /// A flow's id (`s` and `f` of one arrow share it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<u64>,
    /// A flow end's binding point (`e`: the enclosing slice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bp: Option<String>,
    /// An instant's scope (`t` thread, `p` process, `g` global).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s: Option<String>,
    /// The event's arguments.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub args: Value,
}

impl Event {
    /// An event with no duration, id or arguments.
    pub fn new(ph: Phase, pid: u64, tid: u64, name: impl Into<String>, ts: f64) -> Self {
        Self {
            name: name.into(),
            cat: String::new(),
            ph,
            ts,
            dur: None,
            pid,
            tid,
            id: None,
            bp: None,
            s: None,
            args: Value::Null,
        }
    }

    /// The same event in category `cat`.
    pub fn cat(mut self, cat: &str) -> Self {
        self.cat = cat.to_string();
        self
    }

    /// The same event with arguments `args` (a JSON object).
    pub fn args(mut self, args: Value) -> Self {
        self.args = args;
        self
    }
}

/// A span to record: rank (`pid`), thread, name, start and duration in microseconds.
///
/// # Example
/// ```
/// use hetlb_trace::Span;
/// let s = Span::new(1, 0, "gather", 100.0, 20.0).cat("balance");
/// assert_eq!(s.event().dur, Some(20.0));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    event: Event,
}

impl Span {
    /// A span of `dur` microseconds from `ts` on thread `tid` of process `pid`.
    pub fn new(pid: u64, tid: u64, name: impl Into<String>, ts: f64, dur: f64) -> Self {
        let mut event = Event::new(Phase::Complete, pid, tid, name, ts);
        event.dur = Some(dur.max(0.0));
        Self { event }
    }

    /// The same span in category `cat`.
    pub fn cat(self, cat: &str) -> Self {
        Self {
            event: self.event.cat(cat),
        }
    }

    /// The same span with arguments.
    pub fn args(self, args: Value) -> Self {
        Self {
            event: self.event.args(args),
        }
    }

    /// The event it records.
    pub fn event(&self) -> &Event {
        &self.event
    }

    /// The event, taken.
    pub fn into_event(self) -> Event {
        self.event
    }
}
