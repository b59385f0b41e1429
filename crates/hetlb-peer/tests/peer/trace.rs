//! The option `trace`: the file four ranks of a threads group write together passes the
//! Trace Event format check and holds what the calls did; a path that cannot be written is
//! refused when the balancer is built.

use hetlb_peer::{Balancer, BalancerConfig, PeerError};
use hetlb_transport::threads;
use serde_json::Value;

fn temp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("hetlb-peer-trace-{}-{name}", std::process::id()))
}

#[test]
fn four_ranks_write_one_trace_that_checks() {
    let path = temp("four.json");
    let cfg = BalancerConfig::new("dem")
        .unwrap()
        .set("speeds", "measured")
        .unwrap()
        .set("trace", path.to_str().unwrap())
        .unwrap();
    let handles: Vec<_> = threads::group(4)
        .into_iter()
        .map(|member| {
            let cfg = cfg.clone();
            std::thread::spawn(move || {
                let rank = member.rank();
                let mut items: Vec<u64> = if rank == 0 {
                    (0..400).collect()
                } else {
                    Vec::new()
                };
                let mut b = Balancer::new(&member, cfg).unwrap();
                for _ in 0..3 {
                    b.record(items.len() as u64 + 1, 0.001 * (rank + 1) as f64);
                    b.rebalance(&mut items).unwrap();
                }
                items.len()
            })
        })
        .collect();
    let total: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(total, 400);
    let text = std::fs::read_to_string(&path).unwrap();
    let summary = hetlb_trace::check(&text).unwrap();
    assert_eq!(summary.processes, 5, "four ranks and the group");
    assert!(summary.flows >= 1, "the first call moves: {summary:?}");
    assert!(summary.counters > 0 && summary.spans > 0);
    let doc: Value = serde_json::from_str(&text).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    for name in ["rebalance", "gather", "decide", "move", "agree", "compute"] {
        assert!(
            events.iter().any(|e| e["ph"] == "X" && e["name"] == name),
            "no span {name}"
        );
    }
    assert!(
        events
            .iter()
            .any(|e| e["ph"] == "C" && e["name"] == "imbalance")
    );
    assert!(
        events
            .iter()
            .any(|e| e["ph"] == "M" && e["args"]["name"] == "rank 3")
    );
    assert_eq!(doc["otherData"]["ranks"], 4);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_path_that_cannot_be_written_is_refused_at_creation() {
    let dir = std::env::temp_dir();
    let mut bad = vec![dir.to_str().unwrap().to_string()];
    if std::path::Path::new("/dev/full").exists() {
        bad.push("/dev/full".into());
    }
    bad.push(temp("no-such-dir/t.json").to_str().unwrap().to_string());
    for path in bad {
        let cfg = BalancerConfig::new("dem")
            .unwrap()
            .set("trace", &path)
            .unwrap();
        let member = threads::group(1).pop().unwrap();
        let e = Balancer::<u64, _>::new(&member, cfg).unwrap_err();
        assert!(
            matches!(&e, PeerError::Config(c) if c.option_name() == Some("trace")),
            "{path}: {e}"
        );
        assert!(e.to_string().contains("trace"), "{e}");
    }
}

#[test]
fn a_call_given_up_is_an_instant_of_every_rank_and_the_trace_still_checks() {
    use hetlb_peer::Fault;
    let path = temp("fault.json");
    let cfg = BalancerConfig::new("dem")
        .unwrap()
        .set("trace", path.to_str().unwrap())
        .unwrap();
    let handles: Vec<_> = threads::group(4)
        .into_iter()
        .map(|member| {
            let mut cfg = cfg.clone();
            if member.rank() == 0 {
                cfg = cfg.fault(Fault::LeaveAfterSends(1));
            }
            std::thread::spawn(move || {
                let mut items: Vec<u64> = if member.rank() == 0 {
                    (0..40).collect()
                } else {
                    Vec::new()
                };
                let mut b = Balancer::new(&member, cfg).unwrap();
                let failed = b.rebalance(&mut items).is_err();
                (failed, items.len())
            })
        })
        .collect();
    let results: Vec<(bool, usize)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(results.iter().all(|r| r.0), "{results:?}");
    assert_eq!(results.iter().map(|r| r.1).sum::<usize>(), 40);
    let text = std::fs::read_to_string(&path).unwrap();
    hetlb_trace::check(&text).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let faults: Vec<&Value> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "i" && e["cat"] == "fault")
        .collect();
    assert!(faults.len() >= 4, "one on every rank: {faults:?}");
    assert!(faults.iter().all(|e| e["args"]["error"].is_string()));
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn two_balancers_of_a_rank_share_the_trace_on_threads_of_their_own() {
    // As the C interface does: every rank holds two balancers with the same configuration.
    let path = temp("two.json");
    let cfg = BalancerConfig::new("dem").unwrap().trace(&path);
    let handles: Vec<_> = threads::group(2)
        .into_iter()
        .map(|member| {
            let cfg = cfg.clone();
            std::thread::spawn(move || {
                let mut items: Vec<u64> = if member.rank() == 0 {
                    (0..40).collect()
                } else {
                    Vec::new()
                };
                let mut first = Balancer::new(&member, cfg.clone()).unwrap();
                let mut second = Balancer::new(&member, cfg).unwrap();
                for b in [&mut first, &mut second] {
                    b.record(10, 0.001);
                    b.rebalance(&mut items).unwrap();
                }
                items.len()
            })
        })
        .collect();
    let total: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert_eq!(total, 40);
    let text = std::fs::read_to_string(&path).unwrap();
    let s = hetlb_trace::check(&text).unwrap();
    assert!(s.flows >= 1, "{s:?}");
    let doc: Value = serde_json::from_str(&text).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    assert!(
        events
            .iter()
            .any(|e| e["args"]["name"] == "balancer 2" && e["tid"] == 2)
    );
    let steps = events.iter().filter(|e| e["name"] == "compute").count();
    assert_eq!(
        steps, 2,
        "one step a rank: the second balancer's is the same step"
    );
    std::fs::remove_file(&path).unwrap();
}
