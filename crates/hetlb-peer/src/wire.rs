//! The messages of the rebalance protocol (private to the peer balancer; they travel on the
//! balancer's own endpoint of the transport).

use serde::{Deserialize, Serialize};

/// What one rank contributes to the gather at the start of a rebalance.
#[derive(Debug, Clone, Default, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct RankState {
    /// The rank.
    pub(crate) rank: u32,
    /// Units it holds (Σ of its items' loads).
    pub(crate) units: u64,
    /// Items it holds.
    pub(crate) items: u64,
    /// Its measured speed in units per second, when it has one.
    pub(crate) speed: Option<f64>,
    /// A digest of its configuration; every rank's must be equal.
    pub(crate) fingerprint: u64,
    /// Its learned cost model, when it learns one (rank 0's is the group's).
    pub(crate) model: Option<hetlb_core::advice::CostModel>,
    /// Seconds of its last recorded step, when it recorded one.
    pub(crate) step_seconds: Option<f64>,
    /// Seconds of its last check (the gather and the plans of a `rebalance` that
    /// communicated), when it made one.
    pub(crate) call_seconds: Option<f64>,
    /// Rule `auto`: rank 0's learned shortfalls (the group's); `None` from the other ranks.
    pub(crate) shortfalls: Option<super::shortfalls::Shortfalls>,
    /// Its items' positions summed, when items give positions.
    pub(crate) moments: Option<super::locality::Moments>,
    /// True when each of its items has one unit (as far as its store knows).
    pub(crate) unit_items: bool,
}

/// What one rank reports when it has finished its part of the move (its vote).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub(crate) struct DoneSummary {
    /// Units it holds after the move.
    pub(crate) units: u64,
    /// Items it holds after the move.
    pub(crate) items: u64,
    /// Seconds from the start of its move to its last transfer.
    pub(crate) move_seconds: f64,
    /// Σ over its sent transfers of the seconds from the first send to the acknowledgement.
    pub(crate) link_seconds: f64,
    /// Units in those transfers.
    pub(crate) link_units: u64,
    /// Its items' positions summed after the move, when items give positions.
    pub(crate) moments: Option<super::locality::Moments>,
}

/// One message of the protocol. `T` is what carries items: a chunk of the balancer's store
/// (`Vec<Item>`, or a run of byte records).
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Msg<T> {
    /// One step of the all-gather of the ranks' states.
    Gather {
        epoch: u64,
        round: u32,
        entries: Vec<RankState>,
    },
    /// Items carrying (part of) a planned transfer.
    Items {
        epoch: u64,
        transfer: u32,
        /// True on the transfer's last message.
        last: bool,
        units: u64,
        items: T,
    },
    /// A transfer fully received.
    Ack { epoch: u64, transfer: u32 },
    /// The votes of the sender's subtree of the agreement's tree (where the ranks share no
    /// memory): the sender and every rank below it have finished their part of the move and
    /// vote to commit; their summaries in rank order, the sender's first. Sent to the
    /// sender's parent in the tree.
    Vote {
        epoch: u64,
        summaries: Vec<DoneSummary>,
    },
    /// The coordinator's decision of the call (where the ranks share no memory): a commit
    /// travels down the agreement's tree, an abort goes to every rank.
    Decision { epoch: u64, outcome: WireOutcome },
    /// To the coordinator: send the decision of the call to these ranks directly (their
    /// parent in the tree failed, or left the call without it).
    Ask { epoch: u64, ranks: Vec<u32> },
    /// From a rank's parent in the agreement's tree: it will not pass the decision on (it is
    /// in doubt, or stopped waiting), and has asked the coordinator to send it directly.
    Redirect { epoch: u64 },
    /// The sender gave up the call before voting: the call cannot commit. `refused`: the
    /// culprit refused the call itself (its own arguments failed a check, or it gave up on
    /// its own) and is healthy; otherwise the culprit failed. A rank that leaves a call given
    /// up by another passes it on unchanged.
    GiveUp {
        epoch: u64,
        culprit: Option<u32>,
        reason: String,
        refused: bool,
    },
    /// Arrival in a call: `ask`, "have you reached call `epoch`?", sent to a peer that has not
    /// been heard in it for the entry timeout; the answer (`ask` false) from a rank that has.
    Here { epoch: u64, ask: bool },
    /// The call's outcome is in the group's ledger: look (where the ranks share memory). Sent
    /// down a binomial tree rooted at the rank that decided (`root`), each rank forwarding it
    /// to its children, so that no rank sends more than `⌈log₂ P⌉` of them.
    Decided { epoch: u64, root: u32 },
    /// One round of a barrier.
    Arrive { epoch: u64, round: u32 },
    /// One round of the cost probe's exchange `pass` (0: empty messages, 1: full ones).
    Probe {
        epoch: u64,
        pass: u32,
        round: u32,
        bytes: Vec<u8>,
    },
    /// A piece of the sender's byte string for the receiver in
    /// [`crate::Balancer::exchange_bytes`]; `last` on its final piece.
    Part {
        epoch: u64,
        last: bool,
        bytes: crate::store::ByteChunk,
    },
    /// One round of the all-gather of the ranks' numbers ([`crate::Balancer::all_gather_values`]):
    /// `(rank, numbers)` for every rank the sender knows.
    Values {
        epoch: u64,
        round: u32,
        entries: Vec<(u32, Vec<f64>)>,
    },
}

/// A decision as it travels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) enum WireOutcome {
    /// Every rank voted; their summaries in rank order.
    Commit(Vec<DoneSummary>),
    /// The call is rolled back.
    Abort {
        by: u32,
        culprit: Option<u32>,
        reason: String,
    },
}

impl<T> Msg<T> {
    /// The call the message belongs to.
    pub(crate) fn epoch(&self) -> u64 {
        match self {
            Msg::Gather { epoch, .. }
            | Msg::Items { epoch, .. }
            | Msg::Ack { epoch, .. }
            | Msg::Vote { epoch, .. }
            | Msg::Decision { epoch, .. }
            | Msg::Ask { epoch, .. }
            | Msg::Redirect { epoch }
            | Msg::GiveUp { epoch, .. }
            | Msg::Decided { epoch, .. }
            | Msg::Arrive { epoch, .. }
            | Msg::Probe { epoch, .. }
            | Msg::Values { epoch, .. }
            | Msg::Part { epoch, .. }
            | Msg::Here { epoch, .. } => *epoch,
        }
    }
}
