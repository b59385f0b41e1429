//! The format check holds traces to what Perfetto's and chrome://tracing's importers need,
//! and the writer's output passes it, bounded or not.

use hetlb_trace::{Span, Trace, TraceError, check, merge};
use serde_json::{Value, json};

/// A trace of `ranks` ranks and `calls` calls, each with its phases, counters and a flow
/// from every rank to the next.
fn busy_trace(ranks: u64, calls: u64, limit: usize) -> Trace {
    let mut t = Trace::new(limit);
    for r in 0..ranks {
        t.process_name(r, &format!("rank {r}"));
    }
    for c in 0..calls {
        let t0 = c as f64 * 100.0;
        for r in 0..ranks {
            t.span(Span::new(r, 1, "compute", t0, 50.0));
            t.span(Span::new(r, 0, "rebalance", t0 + 50.0, 40.0));
            t.span(Span::new(r, 0, "gather", t0 + 50.0, 10.0));
            t.span(Span::new(r, 0, "move", t0 + 60.0, 30.0));
            t.counter(r, "load", t0, "units", (r * c) as f64);
            let id = c * ranks + r;
            t.flow(r, 0, id, true, t0 + 65.0, json!({ "units": 1 }));
            t.flow(
                (r + 1) % ranks,
                0,
                id,
                false,
                t0 + 85.0,
                json!({ "units": 1 }),
            );
        }
        t.counter(
            ranks,
            "imbalance",
            t0,
            "max/mean",
            1.0 + 1.0 / (c + 1) as f64,
        );
    }
    t
}

fn events(text: &str) -> Vec<Value> {
    let doc: Value = serde_json::from_str(text).unwrap();
    doc["traceEvents"].as_array().unwrap().clone()
}

#[test]
fn the_writers_trace_passes_and_every_event_has_the_required_fields() {
    let text = busy_trace(8, 20, 100_000).to_json_string();
    let s = check(&text).unwrap();
    assert_eq!((s.processes, s.flows, s.dropped), (9, 160, 0));
    assert_eq!(s.spans, 8 * 20 * 4);
    for e in events(&text) {
        for key in ["ph", "ts", "pid", "tid", "name"] {
            assert!(e.get(key).is_some(), "{e} lacks {key}");
        }
    }
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["displayTimeUnit"], "ms");
    assert_eq!(doc["otherData"]["event_limit"], 100_000);
}

#[test]
fn past_its_limit_the_trace_samples_counters_drops_the_rest_and_says_so() {
    let t = busy_trace(8, 200, 500);
    assert!(t.len() <= 500 + 16, "{}", t.len());
    let text = t.to_json_string();
    let s = check(&text).unwrap();
    assert!(s.dropped > 0);
    let doc: Value = serde_json::from_str(&text).unwrap();
    let other = &doc["otherData"];
    assert!(other["events_dropped"].as_u64().unwrap() > 0);
    assert!(
        other["bounded"]
            .as_str()
            .unwrap()
            .contains("past 500 events")
    );
    // Every rank is still named.
    let named = events(&text)
        .iter()
        .filter(|e| e["name"] == "process_name")
        .count();
    assert_eq!(named, 8);
}

#[test]
fn each_kind_of_fault_is_named() {
    let cases = [
        (
            json!([{"ph":"X","ts":0,"pid":0,"tid":0,"name":"a"}]),
            "event 0: no \"dur\"",
        ),
        (
            json!([{"ph":"X","ts":0,"pid":0,"name":"a","dur":1}]),
            "event 0: no \"tid\"",
        ),
        (
            json!([{"ts":0,"pid":0,"tid":0,"name":"a"}]),
            "event 0: no \"ph\"",
        ),
        (
            json!([{"ph":"B","ts":0,"pid":0,"tid":0,"name":"a"}]),
            "begins but never ends",
        ),
        (json!([{"ph":"E","ts":0,"pid":0,"tid":0}]), "no open \"B\""),
        (
            json!([{"ph":"B","ts":0,"pid":0,"tid":0,"name":"a"},{"ph":"E","ts":1,"pid":0,"tid":0,"name":"b"}]),
            "closes 'a'",
        ),
        (
            json!([{"ph":"X","ts":0,"dur":10,"pid":0,"tid":0,"name":"a"},{"ph":"X","ts":5,"dur":10,"pid":0,"tid":0,"name":"b"}]),
            "overlap without nesting",
        ),
        (
            json!([{"ph":"s","ts":0,"pid":0,"tid":0,"name":"t","id":7}]),
            "flow id 7 starts but never ends",
        ),
        (
            json!([{"ph":"f","ts":0,"pid":0,"tid":0,"name":"t","id":7}]),
            "flow id 7 ends but never starts",
        ),
        (
            json!([{"ph":"C","ts":0,"pid":0,"tid":0,"name":"load","args":{"u":"x"}}]),
            "not a number",
        ),
        (json!({"events": []}), "no \"traceEvents\""),
    ];
    for (doc, needle) in cases {
        let e = check(&doc.to_string()).unwrap_err();
        assert!(e.to_string().contains(needle), "{doc}: {e}");
    }
    // Nested spans and a B/E pair are fine.
    let ok = json!([
        {"ph":"X","ts":0,"dur":10,"pid":0,"tid":0,"name":"a"},
        {"ph":"X","ts":2,"dur":3,"pid":0,"tid":0,"name":"b"},
        {"ph":"B","ts":20,"pid":0,"tid":0,"name":"c"},
        {"ph":"E","ts":30,"pid":0,"tid":0}
    ]);
    assert_eq!(check(&ok.to_string()).unwrap().spans, 3);
}

#[test]
fn a_truncated_trace_is_named_by_its_byte() {
    let text = busy_trace(2, 3, 1000).to_json_string();
    let cut = &text[..text.len() / 2];
    match check(cut).unwrap_err() {
        TraceError::Json { byte, .. } => assert!(byte <= cut.len() && byte + 200 > cut.len()),
        other => panic!("{other}"),
    }
}

#[test]
fn merged_parts_pass_with_their_flows_paired_across_parts() {
    let full = busy_trace(2, 3, 1000);
    // Rank 0's events in one part, rank 1's in the other.
    let part = |pid: u64| {
        let mut t = Trace::new(1000);
        t.set_other("origin_unix_us", json!(1000.0 * pid as f64));
        for e in full.events().iter().filter(|e| e.pid == pid) {
            t.push(e.clone());
        }
        t.to_json_string()
    };
    let merged = merge(&[part(0), part(1)], 10_000).unwrap();
    let s = check(&merged.to_json_string()).unwrap();
    assert_eq!(s.flows, 6);
    assert_eq!(merged.other()["origin_unix_us"], json!(0.0));
}
