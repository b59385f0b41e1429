//! The bounded buffer of a trace's events, and its JSON.

use crate::event::{Event, Phase, Span};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::io::Write;

/// The default event limit: about 200 MB of JSON.
pub const DEFAULT_EVENT_LIMIT: usize = 1_000_000;

/// Bytes an event takes in the file, on average (an estimate for output limits).
pub const EVENT_BYTES: u64 = 200;

/// What opens a trace's JSON: [`Trace::write_body`] writes the rest.
pub(crate) const PREFIX: &str = "{\"traceEvents\":[\n";

/// A trace being recorded: events in the order they were recorded, bounded by an event
/// limit.
///
/// Past the limit the trace thins its counter samples (it keeps one in two of those it holds,
/// then records one in two, one in four …) and drops other events, counting them; metadata is
/// always kept. `otherData` states the limit, the sampling stride and what was dropped.
///
/// # Example
/// ```
/// use hetlb_trace::Trace;
/// let mut t = Trace::new(16); // the smallest limit
/// for i in 0..100 {
///     t.counter(0, "load", i as f64, "units", i as f64);
/// }
/// assert!(t.len() <= 16);
/// let doc: serde_json::Value = serde_json::from_str(&t.to_json_string()).unwrap();
/// assert!(doc["otherData"]["counter_stride"].as_u64().unwrap() > 1);
/// ```
#[derive(Debug, Clone)]
pub struct Trace {
    events: Vec<Event>,
    limit: usize,
    counter_stride: u64,
    /// Per counter track (process, name): samples seen.
    counters_seen: HashMap<(u64, String), u64>,
    dropped: u64,
    other: Map<String, Value>,
}

impl Trace {
    /// An empty trace keeping at most `limit` events (at least 16).
    pub fn new(limit: usize) -> Self {
        Self {
            events: Vec::new(),
            limit: limit.max(16),
            counter_stride: 1,
            counters_seen: HashMap::new(),
            dropped: 0,
            other: Map::new(),
        }
    }

    /// Events held.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// True when no event is held.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The events held, in recording order.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// The event limit.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Events dropped past the limit (counter samples skipped by the sampling not included).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Sets `key` of `otherData` (the run's command, rule, clock …).
    pub fn set_other(&mut self, key: &str, value: Value) {
        self.other.insert(key.to_string(), value);
    }

    /// `otherData` as recorded so far (without the limit's fields).
    pub fn other(&self) -> &Map<String, Value> {
        &self.other
    }

    /// Records `event`, within the limit.
    pub fn push(&mut self, event: Event) {
        let mut seen = 0;
        if event.ph == Phase::Counter {
            let n = self
                .counters_seen
                .entry((event.pid, event.name.clone()))
                .or_insert(0);
            *n += 1;
            seen = *n;
            if seen % self.counter_stride != 0 {
                return;
            }
        }
        if event.ph != Phase::Metadata && self.events.len() >= self.limit {
            if !self.thin() {
                self.dropped += 1;
                return;
            }
            if event.ph == Phase::Counter && seen % self.counter_stride != 0 {
                return;
            }
        }
        self.events.push(event);
    }

    /// Halves the counter samples held and doubles the stride; false when it freed nothing.
    fn thin(&mut self) -> bool {
        let before = self.events.len();
        let mut kept: HashMap<(u64, String), u64> = HashMap::new();
        self.events.retain(|e| {
            if e.ph != Phase::Counter {
                return true;
            }
            let k = kept.entry((e.pid, e.name.clone())).or_insert(0);
            *k += 1;
            (*k).is_multiple_of(2)
        });
        if self.events.len() == before {
            return false;
        }
        self.counter_stride = self.counter_stride.saturating_mul(2);
        true
    }

    /// Records a span.
    pub fn span(&mut self, span: Span) {
        self.push(span.into_event());
    }

    /// Records one sample of counter track `name` of process `pid`: series `series` at
    /// `value`.
    pub fn counter(&mut self, pid: u64, name: &str, ts: f64, series: &str, value: f64) {
        let value = if value.is_finite() { value } else { 0.0 };
        self.push(Event::new(Phase::Counter, pid, 0, name, ts).args(json!({ series: value })));
    }

    /// Records an instant of thread `tid` of process `pid`.
    pub fn instant(&mut self, pid: u64, tid: u64, name: &str, cat: &str, ts: f64, args: Value) {
        let mut e = Event::new(Phase::Instant, pid, tid, name, ts)
            .cat(cat)
            .args(args);
        e.s = Some("t".to_string());
        self.push(e);
    }

    /// Records one end of flow `id`: its tail (`start`) on the sender, its head on the
    /// receiver (bound to the enclosing slice).
    pub fn flow(&mut self, pid: u64, tid: u64, id: u64, start: bool, ts: f64, args: Value) {
        let ph = if start {
            Phase::FlowStart
        } else {
            Phase::FlowEnd
        };
        let mut e = Event::new(ph, pid, tid, "transfer", ts)
            .cat("move")
            .args(args);
        e.id = Some(id);
        if !start {
            e.bp = Some("e".to_string());
        }
        self.push(e);
    }

    /// Names process `pid` (a rank) and sorts it by its number.
    pub fn process_name(&mut self, pid: u64, name: &str) {
        self.push(
            Event::new(Phase::Metadata, pid, 0, "process_name", 0.0).args(json!({ "name": name })),
        );
        self.push(
            Event::new(Phase::Metadata, pid, 0, "process_sort_index", 0.0)
                .args(json!({ "sort_index": pid })),
        );
    }

    /// Names thread `tid` of process `pid`.
    pub fn thread_name(&mut self, pid: u64, tid: u64, name: &str) {
        self.push(
            Event::new(Phase::Metadata, pid, tid, "thread_name", 0.0).args(json!({ "name": name })),
        );
    }

    /// Appends every event of `other` shifted by `shift` microseconds, and its `otherData`
    /// keys this trace does not have; its dropped events add to this trace's.
    pub fn absorb(&mut self, other: Trace, shift: f64) {
        self.dropped += other.dropped;
        self.counter_stride = self.counter_stride.max(other.counter_stride);
        for (k, v) in other.other {
            self.other.entry(k).or_insert(v);
        }
        for mut e in other.events {
            if e.ph != Phase::Metadata {
                e.ts += shift;
            }
            self.push(e);
        }
    }

    /// `otherData`: what was set, and the limit's fields.
    pub fn other_data(&self) -> Value {
        let mut m = self.other.clone();
        m.insert("producer".into(), json!("hetlb"));
        m.insert("event_limit".into(), json!(self.limit));
        m.insert("events".into(), json!(self.events.len()));
        m.insert("events_dropped".into(), json!(self.dropped));
        m.insert("counter_stride".into(), json!(self.counter_stride));
        if self.dropped > 0 || self.counter_stride > 1 {
            m.insert(
                "bounded".into(),
                json!(format!(
                    "past {} events, one counter sample in {} was kept and {} other events were dropped",
                    self.limit, self.counter_stride, self.dropped
                )),
            );
        }
        Value::Object(m)
    }

    /// Writes everything after [`PREFIX`]: the events, `displayTimeUnit` and `otherData`.
    pub(crate) fn write_body<W: Write>(&self, mut w: W) -> std::io::Result<()> {
        for (i, e) in self.events.iter().enumerate() {
            if i > 0 {
                w.write_all(b",\n")?;
            }
            serde_json::to_writer(&mut w, e)?;
        }
        w.write_all(b"\n],\"displayTimeUnit\":\"ms\",\"otherData\":")?;
        serde_json::to_writer(&mut w, &self.other_data())?;
        w.write_all(b"}\n")?;
        w.flush()
    }

    /// Writes the whole JSON document to `w`.
    ///
    /// # Errors
    /// The writer's.
    pub fn write_json<W: Write>(&self, mut w: W) -> std::io::Result<()> {
        w.write_all(PREFIX.as_bytes())?;
        self.write_body(w)
    }

    /// The whole JSON document.
    pub fn to_json_string(&self) -> String {
        let mut out = Vec::with_capacity(self.events.len() * 128 + 256);
        self.write_json(&mut out)
            .expect("writing to a Vec cannot fail");
        String::from_utf8(out).expect("serde_json writes UTF-8")
    }

    /// A trace read back from its JSON (events past the limit dropped as when recorded).
    ///
    /// # Errors
    /// [`crate::TraceError`] when the text is not a trace.
    pub fn from_json(text: &str, limit: usize) -> Result<Self, crate::TraceError> {
        let doc = crate::check::parse(text)?;
        let mut t = Self::new(limit);
        if let Some(Value::Object(m)) = doc.get("otherData") {
            for (k, v) in m {
                match k.as_str() {
                    "events_dropped" => t.dropped += v.as_u64().unwrap_or(0),
                    "counter_stride" => t.counter_stride = v.as_u64().unwrap_or(1).max(1),
                    "producer" | "event_limit" | "events" | "bounded" => {}
                    _ => t.set_other(k, v.clone()),
                }
            }
        }
        let events = doc
            .get("traceEvents")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for (i, v) in events.into_iter().enumerate() {
            let e: Event = serde_json::from_value(v)
                .map_err(|e| crate::TraceError::format(Some(i), e.to_string()))?;
            t.push(e);
        }
        Ok(t)
    }
}
