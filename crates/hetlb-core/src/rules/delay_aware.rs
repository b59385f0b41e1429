//! Delay-aware sender-initiated balancing with a compensating factor.
//!
//! Mirtaheri & Grandinetti (§§3–4): when external load enters node `i` (the one-shot
//! policy), `i` acts as the centre of its neighbourhood `N_i` (itself and its neighbours). From
//! what it knows of their loads `L_k` and execution rates `λ_k` it computes
//!
//! * the extra load of every member, `L^ex_l = L_l − λ_l / Σλ_k · Σ L_k` (eq. 5);
//! * the receivers `I_i` (negative extra load, eq. 8) and senders `I_i^c` (positive, eq. 9);
//! * the share of receiver `l`, `p_il = L^ex_l / Σ_{m∈I_i} L^ex_m` (eq. 7), and the load that
//!   sender `r` plans to give it, `L_il(r) = ⌊p_il · L^ex_r⌋` (eq. 6, rounded down as in the
//!   paper's example after eq. 9);
//! * when it would arrive, `t_il(r) = L_il(r) / λ_rl` (eq. 10);
//! * for each receiver, its arrivals in time order (eqs. 11–12), its load just before each
//!   arrival `L̃_il(r') = [L̃_il(r'−1) + L_il(r'−1) − λ_l Δt_il(r')]⁺` (eqs. 13–15), and
//!   whether it runs dry first (eq. 16);
//! * if it does, the compensating factor (eq. 25)
//!   `k = λ_r'l/(λ_r' + λ_r'l) + λ_r'/(λ_r' + λ_r'l) · (t(r'−1) + T)/(t(r'−1) + Δt(r'))`,
//!   where `T` is how long the receiver stays busy after `t(r'−1)`; the sender then ships
//!   `⌊k · p_il · L^ex_r'⌋` tasks and keeps the rest. Otherwise `k = 1`.
//!
//! [`Compensation::None`] keeps `k = 1`: the same balancing without compensation, as in
//! Dhakal et al. 2007 (the paper's reference \[19\]). Not balancing at all is the caller's
//! choice of not calling [`decide`].
//!
//! Neighbour loads are usually stale: §4 estimates a load reported `Δt` seconds ago as
//! `L − λ·Δt` ([`estimate_load`]).
//!
//! Choices the paper leaves open, made here:
//! * A link may also have a fixed latency (a communication delay); arrival times are then
//!   `latency + L/λ_rl`, and eq. 25 is applied to these times unchanged. With zero latency
//!   this is exactly eq. 10.
//! * Extra loads within `1e-9·ΣL` of zero count as zero (neither sender nor receiver), so
//!   rounding noise in eq. 5 never creates a transfer.
//! * After a compensated arrival, the later arrivals of the same receiver are timed from the
//!   compensated one (its `t'` and its reduced load enter eq. 13).

use thiserror::Error;

/// What the centre knows about one member of its neighbourhood (the centre included).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Member {
    /// The member's node id (only copied to the output).
    pub node: usize,
    /// Its (estimated) load in tasks, `L_l`; finite and non-negative.
    pub load: f64,
    /// Its execution rate `λ_l` in tasks per second; positive and finite.
    pub rate: f64,
}

/// The centre's estimate of the link from one member to another.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkEstimate {
    /// Transfer rate `λ_rl` in tasks per second; positive, `f64::INFINITY` for instant.
    pub rate: f64,
    /// Fixed communication delay in seconds (0 in the paper's model); finite, non-negative.
    pub latency: f64,
}

impl LinkEstimate {
    /// A link that moves any amount at once.
    pub const INSTANT: LinkEstimate = LinkEstimate {
        rate: f64::INFINITY,
        latency: 0.0,
    };

    /// Seconds from the start of a transfer of `tasks` tasks to its arrival (eq. 10 plus the
    /// latency).
    pub fn arrival(&self, tasks: u64) -> f64 {
        if tasks == 0 {
            0.0
        } else {
            self.latency + tasks as f64 / self.rate
        }
    }
}

/// Whether the compensating factor is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Compensation {
    /// `k = 1`: transfer the planned share whatever the delay (Dhakal et al. 2007).
    None,
    /// `k` from eq. 25 whenever the receiver would run dry before the load arrives.
    #[default]
    Factor,
}

/// One transfer decided by the centre.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct DelayAwareTransfer {
    /// Sending node `r` (a node id from [`Member::node`]).
    pub from: usize,
    /// Receiving node `l`.
    pub to: usize,
    /// The receiver's share `p_il` (eq. 7).
    pub share: f64,
    /// `⌊p_il · L^ex_r⌋`, the load planned before compensation (eq. 6).
    pub planned: u64,
    /// The compensating factor `k_il(r)` (eq. 25), 1 when not applied.
    pub factor: f64,
    /// `⌊k · p_il · L^ex_r⌋`, the tasks to send.
    pub tasks: u64,
    /// Estimated arrival of `tasks`, in seconds after the decision (eq. 10).
    pub arrival: f64,
}

/// The centre's decision for its neighbourhood.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Decision {
    /// `L^ex` of every member, in the order given (eq. 5).
    pub excess: Vec<f64>,
    /// Transfers from every sender to every receiver with a non-zero planned load, grouped by
    /// receiver in order of estimated arrival.
    pub transfers: Vec<DelayAwareTransfer>,
}

impl Decision {
    /// The transfers sent by `node`.
    pub fn sent_by(&self, node: usize) -> impl Iterator<Item = &DelayAwareTransfer> {
        self.transfers.iter().filter(move |t| t.from == node)
    }

    /// Total tasks to be sent.
    pub fn total_tasks(&self) -> u64 {
        self.transfers.iter().map(|t| t.tasks).sum()
    }
}

/// Why [`decide`] refused.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum DelayAwareError {
    /// No members at all.
    #[error("the neighbourhood is empty")]
    Empty,
    /// A load that is negative, NaN or infinite.
    #[error("load of node {node} is {value}: loads must be finite and non-negative")]
    InvalidLoad {
        /// Node id.
        node: usize,
        /// The value given.
        value: f64,
    },
    /// An execution rate that is not positive and finite.
    #[error("execution rate of node {node} is {value}: rates must be positive and finite")]
    InvalidRate {
        /// Node id.
        node: usize,
        /// The value given.
        value: f64,
    },
    /// A link estimate with a bad rate or latency.
    #[error(
        "link {from} -> {to}: rate {rate} and latency {latency} must be positive and non-negative"
    )]
    InvalidLink {
        /// Sending node id.
        from: usize,
        /// Receiving node id.
        to: usize,
        /// Its rate.
        rate: f64,
        /// Its latency.
        latency: f64,
    },
}

/// Estimates a load reported `age` seconds ago by a node executing `rate` tasks per second:
/// `[L − λ·Δt]⁺` (Mirtaheri & Grandinetti 2017 §4).
///
/// # Example
/// ```
/// use hetlb_core::rules::delay_aware::estimate_load;
/// assert_eq!(estimate_load(300.0, 500.0, 0.1), 250.0);
/// assert_eq!(estimate_load(300.0, 500.0, 1.0), 0.0);
/// ```
pub fn estimate_load(reported: f64, rate: f64, age: f64) -> f64 {
    (reported - rate * age.max(0.0)).max(0.0)
}

/// The compensating factor of eq. 25.
///
/// * `sender_rate` — `λ_r'`, the sender's execution rate;
/// * `link_rate` — `λ_r'l`, the transfer rate (infinite gives 1);
/// * `previous` — `t(r'−1)`, the previous arrival at the receiver (0 for the first);
/// * `busy` — `T`, how long after `previous` the receiver still has work;
/// * `gap` — `Δt(r')`, from `previous` to the planned arrival.
///
/// Returns 1 when the receiver is still busy at the arrival (`T ≥ Δt`); otherwise a value in
/// `[(t(r'−1)+T)/(t(r'−1)+Δt), 1]` (eq. 19).
///
/// # Complexity
/// `O(1)`.
///
/// # Example
/// ```
/// use hetlb_core::rules::delay_aware::compensating_factor;
/// // Mirtaheri & Grandinetti 2017 §5, delayed scenario: λ_r = 200, λ_rl = 100, the receiver is busy 1.4 s and the
/// // 500 planned tasks take 5 s: k = 1/3 + 2/3 · 1.4/5.
/// let k = compensating_factor(200.0, 100.0, 0.0, 1.4, 5.0);
/// assert!((k - (1.0 / 3.0 + 2.0 / 3.0 * 0.28)).abs() < 1e-12);
/// assert_eq!(compensating_factor(200.0, 100.0, 0.0, 6.0, 5.0), 1.0);
/// assert_eq!(compensating_factor(200.0, f64::INFINITY, 0.0, 1.0, 5.0), 1.0);
/// ```
pub fn compensating_factor(
    sender_rate: f64,
    link_rate: f64,
    previous: f64,
    busy: f64,
    gap: f64,
) -> f64 {
    if busy >= gap || link_rate.is_infinite() || previous + gap <= 0.0 {
        return 1.0;
    }
    let a = link_rate / (sender_rate + link_rate);
    let ratio = (previous + busy.max(0.0)) / (previous + gap);
    (a + (1.0 - a) * ratio).clamp(0.0, 1.0)
}

/// Decides the transfers of a neighbourhood, from the centre's point of view (eqs. 5–25).
///
/// # Arguments
/// * `members` — the centre and its neighbours with their estimated loads and rates;
/// * `link` — the link estimate from member index `r` to member index `l` (indices into
///   `members`);
/// * `compensation` — [`Compensation::Factor`] for eq. 25, [`Compensation::None`] for `k = 1`.
///
/// # Returns
/// The extra loads and the transfers from every sender to every receiver. The caller decides
/// which of them to carry out (a simulator typically carries out the centre's own).
///
/// # Errors
/// [`DelayAwareError`] for an empty neighbourhood or a load, rate or link that is out of range.
///
/// # Complexity
/// `O(m + S·R·log S)` for `m` members, `S` senders and `R` receivers.
///
/// # Example
/// ```
/// use hetlb_core::rules::delay_aware::{decide, Compensation, LinkEstimate, Member};
/// // Mirtaheri & Grandinetti 2017 §5, first scenario at t = 0.1 s: node 1 holds 1250 tasks, its neighbours 2 and 5
/// // hold 250 each, all execute 500 tasks/s, transfers are instant.
/// let members = [
///     Member { node: 1, load: 1250.0, rate: 500.0 },
///     Member { node: 2, load: 250.0, rate: 500.0 },
///     Member { node: 5, load: 250.0, rate: 500.0 },
/// ];
/// let d = decide(&members, |_, _| LinkEstimate::INSTANT, Compensation::Factor).unwrap();
/// assert_eq!(d.total_tasks(), 666); // ⌊0.5 · 666.7⌋ to each neighbour
/// assert!(d.sent_by(1).all(|t| t.tasks == 333 && t.factor == 1.0));
/// ```
pub fn decide(
    members: &[Member],
    link: impl Fn(usize, usize) -> LinkEstimate,
    compensation: Compensation,
) -> Result<Decision, DelayAwareError> {
    if members.is_empty() {
        return Err(DelayAwareError::Empty);
    }
    for m in members {
        if !(m.load.is_finite() && m.load >= 0.0) {
            return Err(DelayAwareError::InvalidLoad {
                node: m.node,
                value: m.load,
            });
        }
        if !(m.rate.is_finite() && m.rate > 0.0) {
            return Err(DelayAwareError::InvalidRate {
                node: m.node,
                value: m.rate,
            });
        }
    }
    let total_load: f64 = members.iter().map(|m| m.load).sum();
    let total_rate: f64 = members.iter().map(|m| m.rate).sum();
    // Eq. 5.
    let excess: Vec<f64> = members
        .iter()
        .map(|m| m.load - m.rate / total_rate * total_load)
        .collect();
    let tolerance = 1e-9 * total_load.max(1.0);
    let receivers: Vec<usize> = (0..members.len())
        .filter(|&l| excess[l] < -tolerance)
        .collect();
    let senders: Vec<usize> = (0..members.len())
        .filter(|&r| excess[r] > tolerance)
        .collect();
    // Eq. 7's denominator (negative).
    let deficit: f64 = receivers.iter().map(|&l| excess[l]).sum();

    let mut transfers = Vec::new();
    for &l in &receivers {
        let share = excess[l] / deficit;
        // Eqs. 6 and 10: what every sender plans to give l, and when it would arrive.
        let mut incoming = Vec::with_capacity(senders.len());
        for &r in &senders {
            let planned = (share * excess[r]).floor() as u64;
            if planned == 0 {
                continue;
            }
            let est = link(r, l);
            if !(est.rate > 0.0 && est.latency.is_finite() && est.latency >= 0.0) {
                return Err(DelayAwareError::InvalidLink {
                    from: members[r].node,
                    to: members[l].node,
                    rate: est.rate,
                    latency: est.latency,
                });
            }
            incoming.push((r, planned, est));
        }
        // Eqs. 11–12: in order of arrival (ties by member order, the sort is stable).
        incoming.sort_by(|a, b| a.2.arrival(a.1).total_cmp(&b.2.arrival(b.1)));

        // Eqs. 13–16 with L̃(0) = L_l, L(0) = 0, t(0) = 0.
        let rate_l = members[l].rate;
        let mut before = members[l].load; // L̃(r'−1)
        let mut received = 0.0; // L(r'−1)
        let mut previous = 0.0; // t(r'−1)
        for (r, planned, est) in incoming {
            let planned_arrival = est.arrival(planned);
            let gap = (planned_arrival - previous).max(0.0); // Δt(r'), eqs. 14–15
            let busy = (before + received) / rate_l; // T, from eq. 16
            let factor = match compensation {
                Compensation::None => 1.0,
                Compensation::Factor => {
                    compensating_factor(members[r].rate, est.rate, previous, busy, gap)
                }
            };
            let tasks = if factor >= 1.0 {
                planned
            } else {
                ((factor * share * excess[r]).floor() as u64).min(planned)
            };
            let arrival = est.arrival(tasks);
            // Eq. 13 for the next arrival, from the (compensated) arrival just decided.
            let elapsed = (arrival - previous).max(0.0);
            before = (before + received - rate_l * elapsed).max(0.0);
            received = tasks as f64;
            previous = previous.max(arrival);
            transfers.push(DelayAwareTransfer {
                from: members[r].node,
                to: members[l].node,
                share,
                planned,
                factor,
                tasks,
                arrival,
            });
        }
    }
    Ok(Decision { excess, transfers })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn member(node: usize, load: f64, rate: f64) -> Member {
        Member { node, load, rate }
    }

    #[test]
    fn extra_loads_follow_eq_5() {
        let members = [member(0, 900.0, 100.0), member(1, 0.0, 200.0)];
        let d = decide(&members, |_, _| LinkEstimate::INSTANT, Compensation::None).unwrap();
        // Share of node 1 is 2/3 of 900.
        assert!((d.excess[0] - 600.0).abs() < 1e-9);
        assert!((d.excess[1] + 600.0).abs() < 1e-9);
        assert_eq!(d.transfers.len(), 1);
        assert_eq!(d.transfers[0].tasks, 600);
        assert_eq!(d.transfers[0].share, 1.0);
    }

    #[test]
    fn compensation_cuts_a_late_transfer() {
        // The delayed scenario of Mirtaheri & Grandinetti 2017 §5: node 6 (1280 tasks) and node 5 (280), 200 tasks/s,
        // 100 tasks/s over the link.
        let members = [member(6, 1280.0, 200.0), member(5, 280.0, 200.0)];
        let link = |_, _| LinkEstimate {
            rate: 100.0,
            latency: 0.0,
        };
        let plain = decide(&members, link, Compensation::None).unwrap();
        assert_eq!(plain.transfers[0].tasks, 500);
        assert_eq!(plain.transfers[0].arrival, 5.0);
        let comp = decide(&members, link, Compensation::Factor).unwrap();
        let t = comp.transfers[0];
        // Node 5 runs dry after 1.4 s; k = 1/3 + 2/3 · 1.4 / 5 = 0.52.
        assert!((t.factor - 0.52).abs() < 1e-12, "{}", t.factor);
        assert_eq!(t.tasks, 260);
        assert_eq!(t.planned, 500);
    }

    #[test]
    fn no_compensation_when_the_receiver_is_busy() {
        let members = [member(0, 1000.0, 10.0), member(1, 500.0, 10.0)];
        let link = |_, _| LinkEstimate {
            rate: 1000.0,
            latency: 0.0,
        };
        let d = decide(&members, link, Compensation::Factor).unwrap();
        assert_eq!(d.transfers[0].factor, 1.0);
        assert_eq!(d.transfers[0].tasks, 250);
    }

    #[test]
    fn later_arrivals_see_the_earlier_ones() {
        // Two senders into one receiver; the second arrival finds the receiver busy with the
        // first one's load, so only the first is compensated.
        let members = [
            member(0, 1000.0, 100.0),
            member(1, 1000.0, 100.0),
            member(2, 0.0, 100.0),
        ];
        let link = |r: usize, _| LinkEstimate {
            rate: if r == 0 { 1000.0 } else { 100.0 },
            latency: 0.0,
        };
        let d = decide(&members, link, Compensation::Factor).unwrap();
        assert_eq!(d.transfers.len(), 2);
        assert_eq!(d.transfers[0].from, 0);
        assert!(d.transfers[0].factor < 1.0);
        assert_eq!(d.transfers[1].from, 1);
        let first = d.transfers[0];
        // The receiver executes the first batch for tasks/100 s after it lands.
        let busy_until = first.arrival + first.tasks as f64 / 100.0;
        assert_eq!(d.transfers[1].factor == 1.0, busy_until >= 333.0 / 100.0);
    }

    #[test]
    fn rejects_bad_input() {
        assert_eq!(
            decide(&[], |_, _| LinkEstimate::INSTANT, Compensation::None),
            Err(DelayAwareError::Empty)
        );
        let bad_rate = [member(3, 1.0, 0.0)];
        assert!(matches!(
            decide(&bad_rate, |_, _| LinkEstimate::INSTANT, Compensation::None),
            Err(DelayAwareError::InvalidRate { node: 3, .. })
        ));
        let bad_load = [member(4, f64::NAN, 1.0)];
        assert!(matches!(
            decide(&bad_load, |_, _| LinkEstimate::INSTANT, Compensation::None),
            Err(DelayAwareError::InvalidLoad { node: 4, .. })
        ));
        let members = [member(0, 10.0, 1.0), member(1, 0.0, 1.0)];
        let bad_link = |_, _| LinkEstimate {
            rate: 0.0,
            latency: 0.0,
        };
        assert!(matches!(
            decide(&members, bad_link, Compensation::None),
            Err(DelayAwareError::InvalidLink { .. })
        ));
    }

    proptest! {
        /// Senders never give away more than their extra load, each receiver never gets more
        /// than its deficit (up to rounding), and compensation only ever reduces a transfer.
        #[test]
        fn transfers_are_bounded(
            loads in proptest::collection::vec(0u32..5000, 1..8),
            rates in proptest::collection::vec(1u32..1000, 8),
            link_rate in 1u32..2000,
            latency in 0u32..100,
        ) {
            let members: Vec<Member> = loads
                .iter()
                .zip(&rates)
                .enumerate()
                .map(|(i, (&l, &r))| member(i, l as f64, r as f64))
                .collect();
            let link = |_, _| LinkEstimate { rate: link_rate as f64, latency: latency as f64 / 1000.0 };
            let plain = decide(&members, link, Compensation::None).unwrap();
            let comp = decide(&members, link, Compensation::Factor).unwrap();
            prop_assert_eq!(plain.transfers.len(), comp.transfers.len());
            for (p, c) in plain.transfers.iter().zip(&comp.transfers) {
                prop_assert_eq!(p.tasks, p.planned);
                prop_assert!(c.tasks <= c.planned);
                prop_assert!(c.factor > 0.0 && c.factor <= 1.0);
            }
            for (i, m) in members.iter().enumerate() {
                let sent: u64 = comp.sent_by(m.node).map(|t| t.tasks).sum();
                prop_assert!(sent as f64 <= comp.excess[i].max(0.0) + 1e-6);
                prop_assert!(sent as f64 <= m.load);
                let got: u64 = plain.transfers.iter().filter(|t| t.to == m.node).map(|t| t.tasks).sum();
                prop_assert!(got as f64 <= (-plain.excess[i]).max(0.0) + 1e-6);
            }
        }
    }
}
