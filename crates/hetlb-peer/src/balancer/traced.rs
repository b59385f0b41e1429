//! What a balancer writes to its trace (option `trace`; see `crate::trace`): every hook is
//! one call here, doing nothing when no trace is asked for.

use super::Balancer;
use crate::decide::Migration;
use crate::error::PeerError;
use crate::report::Report;
use crate::store::ItemKind;
use hetlb_core::advice::Trigger;
use hetlb_transport::Group;
use serde_json::json;
use std::time::{Duration, Instant};

/// A flow's id: the call and the transfer's number in the plan.
fn flow_id(epoch: u64, transfer: u32) -> u64 {
    (epoch << 32) | u64::from(transfer)
}

impl<K: ItemKind, G: Group> Balancer<K, G> {
    /// A span of this rank's calls from `start` to now.
    pub(super) fn trace_span(&self, name: &str, start: Instant, args: serde_json::Value) {
        if let Some(t) = &self.trace {
            t.span(name, start, Instant::now(), args);
        }
    }

    /// The start of a deciding call: this rank's load and the group's imbalance before.
    pub(super) fn trace_decided(&self, m: &Migration, started: Instant) {
        let Some(t) = &self.trace else { return };
        if let Some(&load) = m.loads_before.get(self.rank) {
            t.counter("load", "units", load as f64);
        }
        if let Some(c) = m.capacities.as_ref().and_then(|c| c.get(self.rank)) {
            t.counter("capacity", "relative", *c);
        }
        t.imbalance(
            started,
            crate::decide::imbalance(&m.loads_before, &m.weights()),
        );
        let (horizon, margin) = match self.config.options.trigger {
            Trigger::Auto { horizon, margin } => (horizon, margin),
            _ => (1, 0.0),
        };
        let p = m.prediction.as_ref();
        let args = json!({
            "epoch": m.epoch,
            "rule": m.algorithm.name(),
            "moves": !m.is_empty(),
            "held_back": m.held_back,
            "transfers": m.transfers.len(),
            "predicted_gain_per_iteration_s": p.map(|p| p.gain_per_iteration),
            "predicted_gain_over_horizon_s": p.map(|p| p.gain_per_iteration * horizon as f64),
            "predicted_move_s": p.map(|p| p.move_seconds),
            "horizon": horizon,
            "margin": margin,
        });
        let name = if m.held_back { "held back" } else { "decision" };
        t.instant(name, "decision", args);
    }

    /// A committed move: its spans (move, then agree), the arrows of this rank's transfers
    /// and its load after.
    pub(super) fn trace_moved(&self, m: &Migration, start: Instant, agree: f64, r: &Report) {
        let Some(t) = &self.trace else { return };
        let now = Instant::now();
        let agree_start = now
            .checked_sub(Duration::from_secs_f64(agree.max(0.0)))
            .unwrap_or(start)
            .max(start);
        let moved = json!({ "items_sent": r.items_sent, "items_received": r.items_received,
            "units_sent": r.units_sent, "units_received": r.units_received,
            "bytes_sent": r.bytes_sent, "bytes_received": r.bytes_received });
        t.span("move", start, now, moved);
        t.span("agree", agree_start, now, json!({ "epoch": m.epoch }));
        let me = self.rank;
        let per_unit = if r.units_sent > 0 {
            r.bytes_sent as f64 / r.units_sent as f64
        } else {
            0.0
        };
        let ends: Vec<_> = m
            .transfers
            .iter()
            .filter(|x| x.units > 0 && x.from != x.to && (x.from == me || x.to == me))
            .map(|x| {
                let args = json!({ "from": x.from, "to": x.to, "units": x.units,
                    "bytes": (x.units as f64 * per_unit).round() as u64, "phase": x.phase });
                (flow_id(m.epoch, x.id), x.from == me, args)
            })
            .collect();
        t.flows(start, now, &ends);
        t.counter("load", "units", r.units_after as f64);
        t.imbalance(now, r.imbalance_after);
    }

    /// A call the trigger skipped between its checks.
    pub(super) fn trace_skipped(&self) {
        if let Some(t) = &self.trace {
            t.instant("skipped", "decision", json!({ "epoch": self.epoch }));
        }
    }

    /// A call that failed: a fault (a rank named as stopped, a call rolled back, in doubt).
    pub(super) fn trace_failed(&self, e: &PeerError) {
        let Some(t) = &self.trace else { return };
        let kind = match e {
            PeerError::InDoubt { .. } => "in doubt",
            _ if e.loses_a_rank() => "rank stopped",
            PeerError::Refused { .. } | PeerError::Mismatch(_) | PeerError::Plan(_) => "refused",
            _ => "rolled back",
        };
        t.instant(
            kind,
            "fault",
            json!({ "epoch": self.epoch, "error": e.to_string(), "culprit": e.culprit() }),
        );
    }
}
