//! Balancing policies: when to balance and what to move.
//!
//! The engine calls a [`Policy`] at the events a policy may react to — external load
//! injected into a node (the one-shot policy of Mirtaheri & Grandinetti 2017 §3.2), a task arriving at a node — with
//! a read-only [`View`] of the system. The policy answers with [`Order`]s; the engine carries
//! them out, over the links or at once. Policies never touch the engine's state, so the same
//! decision code (the core's rules) is what a runtime would run.
//!
//! | policy | trigger | decision |
//! |---|---|---|
//! | [`NoBalancing`] | — | — |
//! | [`DelayAware`] | injection (one-shot) | `hetlb_core::rules::delay_aware`, with or without the compensating factor |
//! | [`HypercubeThreshold`] | an arrival brings a node to the overload threshold | a core hypercube algorithm over all nodes (Rim, Jang & Kim 2003 §4) |
//! | [`DiffusionPolicy`] | a periodic round, every `interval` seconds | a core diffusion rule, each node on its own and its neighbours' loads (Neelakantan 2012) |

mod delay_aware;
mod diffusion;
mod threshold;

pub use delay_aware::{CarryOut, DelayAware};
pub use diffusion::{DiffusionPolicy, DiffusionSettings};
pub use threshold::HypercubeThreshold;

// The engine-neutral interface lives in the core, where the runtime drives it too.
pub use hetlb_core::policy::{
    DecisionRecord, Delivery, DiffusionError, NoBalancing, Order, Policy, PolicyError, PolicyStats,
    Reported, View,
};

/// Any of the built-in policies, so a scenario can choose one at run time.
#[derive(Debug, Clone)]
pub enum AnyPolicy {
    /// [`NoBalancing`].
    None(NoBalancing),
    /// [`DelayAware`].
    DelayAware(DelayAware),
    /// [`HypercubeThreshold`].
    Hypercube(HypercubeThreshold),
    /// [`DiffusionPolicy`] (boxed: it keeps the rule's buffers, several times the others'
    /// size).
    Diffusion(Box<DiffusionPolicy>),
}

macro_rules! dispatch {
    ($self:ident, $p:ident => $e:expr) => {
        match $self {
            AnyPolicy::None($p) => $e,
            AnyPolicy::DelayAware($p) => $e,
            AnyPolicy::Hypercube($p) => $e,
            AnyPolicy::Diffusion($p) => $e,
        }
    };
}

impl Policy for AnyPolicy {
    fn name(&self) -> String {
        dispatch!(self, p => p.name())
    }

    fn on_injection(
        &mut self,
        view: &dyn View,
        node: usize,
        orders: &mut Vec<Order>,
    ) -> Result<(), PolicyError> {
        dispatch!(self, p => p.on_injection(view, node, orders))
    }

    fn on_arrival(
        &mut self,
        view: &dyn View,
        node: usize,
        orders: &mut Vec<Order>,
    ) -> Result<(), PolicyError> {
        dispatch!(self, p => p.on_arrival(view, node, orders))
    }

    fn uses_reports(&self) -> bool {
        dispatch!(self, p => p.uses_reports())
    }

    fn reads_all_loads(&self) -> bool {
        dispatch!(self, p => p.reads_all_loads())
    }

    fn round_interval(&self) -> Option<f64> {
        dispatch!(self, p => p.round_interval())
    }

    fn on_round(&mut self, view: &dyn View, orders: &mut Vec<Order>) -> Result<(), PolicyError> {
        dispatch!(self, p => p.on_round(view, orders))
    }

    fn stats(&self) -> PolicyStats {
        dispatch!(self, p => p.stats())
    }
}
