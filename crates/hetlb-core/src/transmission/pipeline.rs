//! Overlapping and pipelining with interleaving (Rim, Jang & Kim 2003, §6.2), event-driven.
//!
//! The schedule: in every step each node sends one unit on every link that still has units
//! to carry, as long as it holds units; a unit that arrives in a step can leave in the next. A
//! node that holds fewer units than it has links waiting serves them in turn, starting after
//! the dimension it served last ("interleaving").
//!
//! Most of the time a node holds at least as many units as it has links waiting (it is
//! *full*): it then sends on all of them, step after step, until one of its links is done or
//! its holdings fall short. Simulating those steps one by one costs a unit each; here a full
//! node is advanced in one go between its *events*:
//!
//! * a link done: after `min togo` steps;
//! * possibly short of units: held `h`, `w` links, `ρ` full neighbours sending to it — the
//!   holdings after `k` steps are at least `h + k(ρ − w)`, so the first step it might not be
//!   full is `⌊(h − w)/(w − ρ)⌋ + 1` steps on (never when `ρ ≥ w`);
//! * a change in `ρ`: a neighbour becoming full re-decides a node that is not; a full
//!   neighbour ceasing to send moves a full node's "possibly short" step earlier (the same
//!   bound from its holdings at that step and the lower `ρ`), without deciding it before.
//!
//! Units from nodes that are not full are delivered one by one, and such nodes are decided
//! step by step, as before. An event that comes too early (extra units arrived) only
//! re-decides the node. The schedules are exactly those of the step-by-step simulation
//! (`stepwise.rs`, kept for the property tests that compare the two).
//!
//! The steps to decide are kept in a bucket per step; only the links that carry units have a
//! slot, a node's in one row; the bursts are handed over already in [`super::transmit`]'s
//! order (a counting sort by start of the bursts listed link by link).
//!
//! # Complexity
//! `O(E + S + B)` for `E` events, `B` bursts and `S` steps (`O(E log S)` for the events
//! beyond step 2^16), instead of one operation per unit-hop.

use super::{Burst, Schedule, Togo, TransmissionError};
use std::collections::BTreeMap;

/// The dimensions set in `mask`, in round-robin order starting after `after`.
pub(super) fn round_robin(mask: u64, after: usize) -> impl Iterator<Item = usize> {
    let split = after + 1;
    let (upper, lower) = if split >= 64 {
        (0, mask)
    } else {
        (mask & (u64::MAX << split), mask & !(u64::MAX << split))
    };
    bits(upper).chain(bits(lower))
}

/// The set bits of `mask`, lowest first.
fn bits(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let b = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            b
        })
    })
}

/// The last dimension served by a step that serves all of `mask` after `after`.
fn last_served(mask: u64, after: usize) -> usize {
    let lower = if after >= 63 {
        mask
    } else {
        mask & ((2u64 << after) - 1)
    };
    let pick = if lower != 0 { lower } else { mask };
    63 - pick.leading_zeros() as usize
}

/// One node's state: 64 bytes, one cache line.
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
struct Node {
    /// The step up to which the node's own sends are accounted (in `togo` and the bursts).
    since: u64,
    /// The step at whose start the node held `held` (plus `extra`).
    held_since: u64,
    held: u64,
    /// Units from nodes that are not full, arrived since `held_since`.
    extra: u64,
    /// Links on which this node sends one unit per step (its waiting links while full).
    full: u64,
    /// The first step at which one of the `full` links has sent all its units (`u64::MAX`:
    /// none): until then no link needs looking at.
    done: u64,
    /// The step this node is next decided at (`u64::MAX`: none).
    next: u64,
    /// Full neighbours sending to this node (at most 64).
    rate: u32,
    version: u32,
}

impl Node {
    fn holding(held: u64) -> Self {
        Self {
            since: 0,
            held_since: 0,
            held,
            extra: 0,
            full: 0,
            done: u64::MAX,
            next: u64::MAX,
            rate: 0,
            version: 0,
        }
    }
}

/// One link's state and its open burst, kept together (32 bytes, two to a cache line) so
/// that deciding or closing a link touches one cache line.
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(32))]
struct Link {
    /// Units still to send.
    togo: u64,
    /// For a full link: the step it opened at (its units since then are not yet counted).
    since: u64,
    /// The link's latest burst.
    open: OpenBurst,
}

impl Link {
    /// For a full link: the first step at which it has sent all its units.
    fn done(self) -> u64 {
        self.since + self.togo
    }
}

/// A link's latest burst, still open to extension: its first step and length (`0`: none
/// yet). It joins the finished bursts when a later one cannot extend it.
#[derive(Debug, Clone, Copy, Default)]
struct OpenBurst {
    start: u64,
    len: u64,
}

/// The steps at which nodes are to be decided: a bucket per step for the first
/// [`Calendar::NEAR`] steps (a schedule of `S` steps then costs `O(S)` to walk), an ordered
/// map beyond. Every entry is pushed at a step after the one being taken, so the buckets
/// already walked past stay empty.
#[derive(Default)]
struct Calendar {
    /// `near[s]`: the entries of step `s < NEAR`.
    near: Vec<Vec<(usize, u32)>>,
    /// The first step of `near` not yet taken.
    cursor: usize,
    /// The entries of steps from `NEAR` on.
    far: BTreeMap<u64, Vec<(usize, u32)>>,
    /// Emptied buckets, their allocations kept for the next steps.
    spare: Vec<Vec<(usize, u32)>>,
}

impl Calendar {
    /// Steps below this have a bucket each.
    const NEAR: u64 = 1 << 16;

    fn push(&mut self, step: u64, entry: (usize, u32)) {
        if step < Self::NEAR {
            let s = step as usize;
            if s >= self.near.len() {
                self.near.resize_with(s + 1, Vec::new);
            }
            let bucket = &mut self.near[s];
            if bucket.capacity() == 0
                && let Some(spare) = self.spare.pop()
            {
                *bucket = spare;
            }
            bucket.push(entry);
        } else {
            self.far.entry(step).or_default().push(entry);
        }
    }

    /// The earliest step with entries, and its entries.
    fn pop(&mut self) -> Option<(u64, Vec<(usize, u32)>)> {
        while self.cursor < self.near.len() {
            let s = self.cursor;
            self.cursor += 1;
            if !self.near[s].is_empty() {
                return Some((s as u64, std::mem::take(&mut self.near[s])));
            }
        }
        self.far.pop_first()
    }

    /// Keeps the allocation of a bucket that [`Calendar::pop`] returned.
    fn recycle(&mut self, mut bucket: Vec<(usize, u32)>) {
        bucket.clear();
        self.spare.push(bucket);
    }
}

struct Pipeline {
    /// `rows[k]`: the slot of node `k`'s first link in `links` and `ends`, and the mask of
    /// the dimensions it sends over: only the links that carry units have a slot, so that
    /// the tables are as small as the plan.
    rows: Vec<(usize, u64)>,
    links: Vec<Link>,
    /// `ends[slot]`: for a full link, the first step at which it has sent all its units
    /// ([`Link::done`]), kept apart, eight to a cache line, for the scans of a node's links.
    ends: Vec<u64>,
    waiting: Vec<u64>,
    last: Vec<usize>,
    nodes: Vec<Node>,
    /// Finished bursts; each link's latest one is still in [`Link`].
    bursts: Vec<Burst>,
    /// The nodes to decide at each step, with the version that makes the entry current.
    queue: Calendar,
    /// Units sent this step by nodes that are not full, delivered at its end.
    deliveries: Vec<usize>,
    pending: u128,
    last_send: Option<u64>,
}

impl Pipeline {
    /// The slot of link `(k, m)`, a link that carries units.
    fn slot(&self, k: usize, m: usize) -> usize {
        let (first, used) = self.rows[k];
        first + (used & ((1u64 << m) - 1)).count_ones() as usize
    }

    /// Decide `k` at step `step` unless it is already due earlier.
    fn schedule(&mut self, k: usize, step: u64) {
        let node = &mut self.nodes[k];
        if step < node.next {
            node.next = step;
            node.version = node.version.wrapping_add(1);
            self.queue.push(step, (k, node.version));
        }
    }

    /// Link `(k, m)` carries one unit in each of the steps `start..start + len`.
    fn extend_burst(&mut self, k: usize, m: usize, start: u64, len: u64) {
        let slot = self.slot(k, m);
        let open = &mut self.links[slot].open;
        if open.len > 0 && open.start + open.len == start {
            open.len += len;
        } else {
            if open.len > 0 {
                self.bursts.push(Burst {
                    from: k,
                    to: k ^ (1 << m),
                    start: open.start,
                    len: open.len,
                });
            }
            *open = OpenBurst { start, len };
        }
        self.last_send = Some(self.last_send.unwrap_or(0).max(start + len - 1));
    }

    /// Brings node `k`'s links to the start of step `to`: a full link whose units are all
    /// sent by then is closed; the others stay open, their sends counted when they close.
    fn settle_links(&mut self, k: usize, to: u64) {
        let node = self.nodes[k];
        if to > node.since && node.full != 0 {
            // one full step serves all the full links in round-robin order
            self.last[k] = last_served(node.full, self.last[k]);
            if node.done <= to {
                for m in bits(node.full) {
                    let done = self.ends[self.slot(k, m)];
                    if done <= to {
                        self.close_link(k, m, done);
                        self.nodes[k].full &= !(1 << m);
                    }
                }
                self.nodes[k].done = self.first_done(k, self.nodes[k].full);
            }
        }
        self.nodes[k].since = to;
    }

    /// The first step at which one of node `k`'s full `links` has sent all its units.
    fn first_done(&self, k: usize, links: u64) -> u64 {
        bits(links)
            .map(|m| self.ends[self.slot(k, m)])
            .min()
            .unwrap_or(u64::MAX)
    }

    /// Full link `(k, m)` stops at step `at`: it carried one unit per step since it opened.
    fn close_link(&mut self, k: usize, m: usize, at: u64) {
        let slot = self.slot(k, m);
        let since = self.links[slot].since;
        let sent = at - since;
        if sent > 0 {
            self.links[slot].togo -= sent;
            self.pending -= u128::from(sent);
            self.extend_burst(k, m, since, sent);
        }
        if self.links[slot].togo == 0 {
            self.waiting[k] &= !(1 << m);
        }
    }

    /// Brings node `k`'s holdings to the start of step `to`: what full neighbours sent, what
    /// it sent itself while full, and the others' units. `O(1)`, so that a change of rate
    /// does not touch the node's links.
    fn settle_held(&mut self, k: usize, to: u64) {
        let node = &mut self.nodes[k];
        let steps = to - node.held_since;
        let sent = steps * u64::from(node.full.count_ones());
        node.held =
            node.held + steps * u64::from(node.rate) + std::mem::take(&mut node.extra) - sent;
        node.held_since = to;
    }

    /// A full neighbour of `q` stops sending to it at step `step`. A full receiver may fall
    /// short sooner: it is decided at the first step it might (the bound of [`Pipeline::decide`]
    /// with the lower rate) unless it is due earlier; any other receiver with links waiting in
    /// the next step (one with nothing to send has nothing to decide).
    fn fewer_coming(&mut self, q: usize, step: u64) {
        self.settle_held(q, step);
        self.nodes[q].rate -= 1;
        let node = self.nodes[q];
        // not due at this step: it sends on all its full links in this one
        if node.full != 0 && node.next > step {
            let links = u64::from(node.full.count_ones());
            let rate = u64::from(node.rate);
            if node.held < links {
                self.schedule(q, step + 1);
            } else if rate < links {
                self.schedule(q, step + (node.held - links) / (links - rate) + 1);
            }
        } else if self.waiting[q] != 0 {
            self.schedule(q, step + 1);
        }
    }

    /// Node `k` sends one unit per step on `links` from step `step` on (none: `0`); its
    /// receivers' rates follow.
    fn set_full(&mut self, k: usize, links: u64, step: u64) {
        let before = self.nodes[k].full;
        self.nodes[k].full = links;
        if before & !links != 0 {
            // the links kept are unchanged
            self.nodes[k].done = self.first_done(k, before & links);
        }
        for m in bits(before & !links) {
            self.close_link(k, m, step);
            self.fewer_coming(k ^ (1 << m), step);
        }
        for m in bits(links & !before) {
            let slot = self.slot(k, m);
            let link = &mut self.links[slot];
            link.since = step;
            let done = link.done();
            self.ends[slot] = done;
            self.nodes[k].done = self.nodes[k].done.min(done);
            let q = k ^ (1 << m);
            self.settle_held(q, step);
            self.nodes[q].rate += 1;
            if self.nodes[q].full == 0 && self.waiting[q] != 0 {
                self.schedule(q, step + 1);
            }
        }
    }

    /// Decides node `k` at step `step`.
    fn decide(&mut self, k: usize, step: u64) {
        // holdings first: they count the full links' sends up to this step
        self.settle_held(k, step);
        let before = self.nodes[k].full;
        self.settle_links(k, step);
        // links done during the interval: their receivers' rates dropped when they closed
        for m in bits(before & !self.nodes[k].full) {
            self.fewer_coming(k ^ (1 << m), step);
        }
        let w = self.waiting[k];
        let held = self.nodes[k].held;
        let links = u64::from(w.count_ones());
        if w != 0 && held >= links {
            self.set_full(k, w, step);
            // next event: a link done, or possibly short of units
            let node = self.nodes[k];
            let mut next = node.done;
            let rate = u64::from(node.rate);
            if rate < links {
                let short = (held - links) / (links - rate) + 1;
                next = next.min(step + short);
            }
            self.schedule(k, next);
            return;
        }
        self.set_full(k, 0, step);
        if w == 0 {
            return;
        }
        // Fewer units than links: serve them in turn, one unit each.
        let mut left = held;
        for m in round_robin(w, self.last[k]) {
            if left == 0 {
                break;
            }
            let slot = self.slot(k, m);
            let link = &mut self.links[slot];
            link.togo -= 1;
            if link.togo == 0 {
                self.waiting[k] &= !(1 << m);
            }
            left -= 1;
            self.pending -= 1;
            self.last[k] = m;
            self.extend_burst(k, m, step, 1);
            self.deliveries.push(k ^ (1 << m));
        }
        self.nodes[k].held = left;
        if self.nodes[k].rate > 0 && self.waiting[k] != 0 {
            self.schedule(k, step + 1);
        }
    }
}

/// Returns `(steps, steps, bursts)`.
pub(super) fn run(
    initial: &[u64],
    togo: Togo,
) -> Result<(u64, u64, Vec<Burst>), TransmissionError> {
    let n = togo.n as usize;
    let nodes = initial.len();
    let pending = togo.total();
    let waiting = togo.masks();
    let mut rows = Vec::with_capacity(nodes);
    let mut first = 0;
    for &used in &waiting {
        rows.push((first, used));
        first += used.count_ones() as usize;
    }
    let mut links = Vec::with_capacity(first);
    links.extend(
        togo.units
            .iter()
            .filter(|&&units| units > 0)
            .map(|&togo| Link {
                togo,
                ..Link::default()
            }),
    );
    let mut p = Pipeline {
        rows,
        ends: vec![0; links.len()],
        links,
        waiting,
        last: vec![n.saturating_sub(1); nodes],
        nodes: initial.iter().map(|&held| Node::holding(held)).collect(),
        bursts: Vec::new(),
        queue: Calendar::default(),
        deliveries: Vec::new(),
        pending,
        last_send: None,
    };
    for (k, &held) in initial.iter().enumerate() {
        if p.waiting[k] != 0 && held > 0 {
            p.schedule(k, 0);
        }
    }
    let mut step = 0;
    // Every decision schedules the next one at a later step, so a step's list is complete
    // when it is taken.
    while let Some((s, due)) = p.queue.pop() {
        step = s;
        for &(k, version) in &due {
            if p.nodes[k].version != version {
                continue;
            }
            p.nodes[k].next = u64::MAX;
            p.decide(k, step);
        }
        p.queue.recycle(due);
        // units from nodes that were not full arrive at the end of the step
        for i in 0..p.deliveries.len() {
            let q = p.deliveries[i];
            p.nodes[q].extra += 1;
            if p.nodes[q].full == 0 && p.waiting[q] != 0 {
                p.schedule(q, step + 1);
            }
        }
        p.deliveries.clear();
    }
    if p.pending > 0 {
        return Err(TransmissionError::Stalled {
            schedule: Schedule::Pipeline,
            step: step + 1,
            pending: p.pending,
        });
    }
    let steps = p.last_send.map_or(0, |s| s + 1);
    Ok((steps, steps, p.sorted_bursts(steps)))
}

impl Pipeline {
    /// Every burst, sorted by start, then link (as [`super::transmit`] sorts them, so that its
    /// sort finds them in order): each link's bursts, links in order of sender and receiver,
    /// then a stable counting sort by start, when there are not many more steps than bursts.
    fn sorted_bursts(self, steps: u64) -> Vec<Burst> {
        let mut finished = self.bursts;
        finished.sort_unstable_by_key(|b| (b.from, b.to, b.start));
        let total = self.links.iter().filter(|l| l.open.len > 0).count() + finished.len();
        let starts = usize::try_from(steps).unwrap_or(usize::MAX);
        if starts > total.saturating_mul(4).max(1 << 16) {
            let mut bursts = Vec::with_capacity(total);
            by_link(&self.rows, &self.links, &finished, |b| bursts.push(b));
            return bursts;
        }
        // where the bursts of each start go
        let mut at = vec![0usize; starts + 1];
        for b in &finished {
            at[b.start as usize + 1] += 1;
        }
        for l in &self.links {
            if l.open.len > 0 {
                at[l.open.start as usize + 1] += 1;
            }
        }
        for s in 1..at.len() {
            at[s] += at[s - 1];
        }
        let mut sorted = vec![
            Burst {
                from: 0,
                to: 0,
                start: 0,
                len: 0,
            };
            total
        ];
        by_link(&self.rows, &self.links, &finished, |b| {
            let slot = &mut at[b.start as usize];
            sorted[*slot] = b;
            *slot += 1;
        });
        sorted
    }
}

/// Every burst, in order of sender, receiver and start: the `finished` ones (in that order)
/// and each link's open one.
fn by_link(rows: &[(usize, u64)], links: &[Link], finished: &[Burst], mut each: impl FnMut(Burst)) {
    let mut finished = finished.iter().copied().peekable();
    for (from, &(first, used)) in rows.iter().enumerate() {
        let slot = |m: usize| first + (used & ((1u64 << m) - 1)).count_ones() as usize;
        // receivers in increasing order: from ^ 2^m for the dimensions set in `from`,
        // highest first, then for the others, lowest first
        let mut below = used & from as u64;
        let down = std::iter::from_fn(move || {
            (below != 0).then(|| {
                let m = 63 - below.leading_zeros() as usize;
                below &= !(1 << m);
                m
            })
        });
        for m in down.chain(bits(used & !(from as u64))) {
            let to = from ^ (1 << m);
            while let Some(b) = finished.next_if(|b| (b.from, b.to) == (from, to)) {
                each(b);
            }
            let open = links[slot(m)].open;
            if open.len > 0 {
                each(Burst {
                    from,
                    to,
                    start: open.start,
                    len: open.len,
                });
            }
        }
    }
    finished.for_each(each);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_starts_after_the_last_served() {
        let mask = 0b1011_0110;
        assert_eq!(
            round_robin(mask, 2).collect::<Vec<_>>(),
            vec![4, 5, 7, 1, 2]
        );
        assert_eq!(
            round_robin(mask, 7).collect::<Vec<_>>(),
            vec![1, 2, 4, 5, 7]
        );
        assert_eq!(
            round_robin(1 << 63 | 1, 63).collect::<Vec<_>>(),
            vec![0, 63]
        );
        assert_eq!(round_robin(0, 3).count(), 0);
    }

    #[test]
    fn a_full_step_ends_on_the_last_of_the_round_robin() {
        for mask in [0b1011_0110u64, 1, 1 << 63 | 1, 0b1000] {
            for after in 0..64 {
                assert_eq!(
                    last_served(mask, after),
                    round_robin(mask, after).last().unwrap(),
                    "{mask:b} after {after}"
                );
            }
        }
    }
}
