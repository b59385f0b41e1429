//! Diffusion in time: DISHET and its baselines as periodic rounds while nodes execute
//! (Neelakantan 2012, §§4–5).

use super::{Delivery, Order, Policy, PolicyError, PolicyStats, View};
use hetlb_core::algorithm::Algorithm;
use hetlb_core::policy::DiffusionError;
use hetlb_core::rules::diffusion::{
    Dishet, DishetTight, FirstOrder, Gdem, NodeRule, NodeView, Rounding, Scratch,
};
use hetlb_core::topology::{EdgeColouring, Network};

/// Every `interval` seconds, each node runs one round of a diffusion rule of the core
/// (`dishet`, `diffusion`, `random-biasing`, `dynamic-biasing` or `gdem`, the code of
/// `hetlb balance`) on the loads its neighbours hold at that moment, and sends the units it
/// decides over the links, which carry them at their rates and delays. Nodes keep executing
/// their queues meanwhile; a node's capacity is its execution rate.
///
/// # One node's decision
/// A round is [`DiffusionPolicy::decide_node`] called for every node, and that function needs
/// nothing but the deciding node's own load and the loads of its neighbours (with the static
/// network and the capacities): the entries of the other nodes are never read (a test fills
/// them with garbage). So a rank of a real run can make the same decision from the loads its
/// neighbours send it. Every node decides on the loads at the start of the round and sends out
/// of what it then holds (a node never sends more than its load, whatever arrives or
/// completes during the round), as in `hetlb balance`; units in transit are counted by nobody
/// until they land, which is what a node can know.
///
/// Rounds run at `0, interval, 2·interval, …` for as long as some node has work or units are
/// on the links. Randomised rounding (`random-biasing`) draws from one stream per node and
/// round, seeded by the scenario's seed. `gdem` uses the network's natural edge colouring and
/// λ (Xu & Lau's optimum for the classic networks, 1/2 otherwise) unless λ is given.
///
/// # Complexity
/// `O(N + M log Δ)` per round, plus the transfers.
///
/// # Example
/// ```
/// use hetlb_sim::Scenario;
/// // A ring of 4 with all 400 tasks on node 0: balancing every 0.1 s spreads them.
/// let s = Scenario::from_toml(r#"
///     topology = "ring:4"
///     [nodes]
///     count = 4
///     rate = 100.0
///     initial_loads = [400, 0, 0, 0]
///     [links]
///     rate = 1000.0
///     [policy]
///     kind = "diffusion"
///     algorithm = "dishet"
///     interval = 0.1
/// "#).unwrap();
/// let r = s.run().unwrap();
/// assert!(r.makespan < 2.0);                       // 4 s without balancing
/// assert!(r.nodes[2].executed > 0);
/// ```
#[derive(Debug, Clone)]
pub struct DiffusionPolicy {
    settings: DiffusionSettings,
    seed: u64,
    round: u64,
    /// Built at the first round from the view: capacities, the colouring and λ of `gdem`.
    state: Option<State>,
    /// The loads at the start of the round, and one node's view of its neighbours (kept
    /// from round to round).
    round_loads: Vec<u64>,
    seen: Vec<(usize, u64)>,
}

/// A checked choice of rule, interval and λ: the `[policy]` of a diffusion scenario.
///
/// # Example
/// ```
/// use hetlb_sim::policy::DiffusionSettings;
/// use hetlb_core::algorithm::Algorithm;
/// let s = DiffusionSettings::new(Algorithm::Gdem, 0.5, Some(0.4)).unwrap();
/// assert_eq!(s.interval(), 0.5);
/// assert!(DiffusionSettings::new(Algorithm::Dishet, -1.0, None).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct DiffusionSettings {
    algorithm: Algorithm,
    interval: f64,
    lambda: Option<f64>,
}

impl DiffusionSettings {
    /// `algorithm` every `interval` seconds; `lambda` for `gdem` only.
    ///
    /// # Errors
    /// [`DiffusionError`] for a hypercube algorithm, a bad λ or interval.
    pub fn new(
        algorithm: Algorithm,
        interval: f64,
        lambda: Option<f64>,
    ) -> Result<Self, DiffusionError> {
        if !Algorithm::DIFFUSION.contains(&algorithm) {
            return Err(DiffusionError::NotDiffusion(algorithm));
        }
        if let Some(l) = lambda
            && (algorithm != Algorithm::Gdem || !(l > 0.0 && l < 1.0))
        {
            return Err(DiffusionError::Lambda {
                lambda: l,
                algorithm,
            });
        }
        if !(interval.is_finite() && interval > 0.0) {
            return Err(DiffusionError::Interval(interval));
        }
        Ok(Self {
            algorithm,
            interval,
            lambda,
        })
    }

    /// The rule.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// Seconds between rounds.
    pub fn interval(&self) -> f64 {
        self.interval
    }

    /// `gdem`'s λ, when given.
    pub fn lambda(&self) -> Option<f64> {
        self.lambda
    }
}

#[derive(Debug, Clone)]
struct State {
    capacities: Vec<f64>,
    colouring: Option<(EdgeColouring, f64)>,
    /// Loads and levels as the deciding node sees them: its own and its neighbours' entries
    /// are written before it decides; no other entry is read.
    loads: Vec<u64>,
    levels: Vec<f64>,
    scratch: Scratch,
    out: Vec<(usize, u64)>,
}

impl DiffusionPolicy {
    /// The policy for these settings; `seed` for `random-biasing`.
    pub fn new(settings: DiffusionSettings, seed: u64) -> Self {
        Self {
            settings,
            seed,
            round: 0,
            state: None,
            round_loads: Vec::new(),
            seen: Vec::new(),
        }
    }

    /// The rule.
    pub fn algorithm(&self) -> Algorithm {
        self.settings.algorithm
    }

    /// Prepares the capacities (one per node) and, for `gdem`, the colouring of `network`.
    /// Called by the first round; a runtime rank calls it once with the static network.
    pub fn prepare(&mut self, network: &Network, capacities: Vec<f64>) {
        let nodes = capacities.len();
        let colouring = (self.settings.algorithm == Algorithm::Gdem).then(|| {
            let lambda = self
                .settings
                .lambda
                .unwrap_or_else(|| network.gdem_lambda());
            (network.edge_colouring(), lambda)
        });
        self.state = Some(State {
            capacities,
            colouring,
            loads: vec![0; nodes],
            levels: vec![0.0; nodes],
            scratch: Scratch::default(),
            out: Vec::new(),
        });
    }

    /// What `node` sends in round `round`, from its own load and the loads of its neighbours
    /// only (`seen`: `(neighbour, load)` for every neighbour in `network`); appended to
    /// `orders` as transfers over the links. The units add up to at most `own`.
    ///
    /// This is the whole decision of a node: a runtime rank that knows the static network,
    /// the capacities and its neighbours' loads makes exactly the simulator's decision.
    ///
    /// # Errors
    /// [`DiffusionError::NoNetwork`] when [`DiffusionPolicy::prepare`] was not called.
    pub fn decide_node(
        &mut self,
        network: &Network,
        node: usize,
        own: u64,
        seen: &[(usize, u64)],
        round: u64,
        orders: &mut Vec<Order>,
    ) -> Result<(), DiffusionError> {
        let algorithm = self.settings.algorithm;
        let seed = self.seed;
        let state = self.state.as_mut().ok_or(DiffusionError::NoNetwork)?;
        let c = &state.capacities;
        state.loads[node] = own;
        state.levels[node] = own as f64 / c[node];
        for &(j, w) in seen {
            state.loads[j] = w;
            state.levels[j] = w as f64 / c[j];
        }
        let view = NodeView {
            topology: network,
            loads: &state.loads,
            capacities: &state.capacities,
            levels: &state.levels,
            node,
            round,
            seed,
        };
        state.out.clear();
        let (scratch, out) = (&mut state.scratch, &mut state.out);
        match algorithm {
            Algorithm::Dishet => Dishet.decide(&view, scratch, out),
            Algorithm::DishetTight => DishetTight.decide(&view, scratch, out),
            Algorithm::Diffusion => FirstOrder::new(Rounding::Nearest).decide(&view, scratch, out),
            Algorithm::RandomBiasing => {
                FirstOrder::new(Rounding::Random).decide(&view, scratch, out)
            }
            Algorithm::DynamicBiasing => {
                FirstOrder::new(Rounding::Biased).decide(&view, scratch, out)
            }
            Algorithm::Gdem => {
                if let Some((colouring, lambda)) = &state.colouring
                    && let Ok(rule) = Gdem::new(colouring, *lambda)
                {
                    rule.decide(&view, scratch, out);
                }
            }
            a => return Err(DiffusionError::NotDiffusion(a)),
        }
        let mut budget = own;
        for &(to, units) in out.iter() {
            let units = units.min(budget);
            if units == 0 || to == node {
                continue;
            }
            budget -= units;
            orders.push(Order {
                from: node,
                to,
                tasks: units,
                delivery: Delivery::Link,
            });
        }
        Ok(())
    }
}

impl Policy for DiffusionPolicy {
    fn name(&self) -> String {
        format!(
            "{} every {} s",
            self.settings.algorithm, self.settings.interval
        )
    }

    fn round_interval(&self) -> Option<f64> {
        Some(self.settings.interval)
    }

    fn on_round(&mut self, view: &dyn View, orders: &mut Vec<Order>) -> Result<(), PolicyError> {
        let network = view.network().ok_or(DiffusionError::NoNetwork)?;
        if self.state.is_none() {
            let capacities = (0..view.node_count()).map(|i| view.rate(i)).collect();
            self.prepare(network, capacities);
        }
        // every load once, in one pass: the decisions then read a compact vector
        let mut loads = std::mem::take(&mut self.round_loads);
        loads.clear();
        view.loads_into(&mut loads);
        let mut seen = std::mem::take(&mut self.seen);
        let result = (0..loads.len()).try_for_each(|node| {
            seen.clear();
            seen.extend(view.neighbors(node).iter().map(|&j| (j, loads[j])));
            self.decide_node(network, node, loads[node], &seen, self.round, orders)
        });
        self.round_loads = loads;
        self.seen = seen;
        result?;
        self.round += 1;
        Ok(())
    }

    fn stats(&self) -> PolicyStats {
        PolicyStats {
            balancings: self.round,
            ..PolicyStats::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetlb_core::rounds::RoundEngine;
    use hetlb_core::topology::{Topology, TopologySpec};

    /// One synchronous round of the policy equals one round of the core's engine, and a node's
    /// decision ignores every entry but its own and its neighbours'.
    #[test]
    fn a_round_is_the_cores_round_and_each_decision_is_local() {
        let network = "random:24:0.2:5"
            .parse::<TopologySpec>()
            .unwrap()
            .build()
            .unwrap();
        let n = network.node_count();
        let loads: Vec<u64> = (0..n as u64).map(|i| (i * 37) % 101).collect();
        let caps: Vec<f64> = (0..n).map(|i| 1.0 + (i % 4) as f64).collect();
        let capacities = hetlb_core::Capacities::new(caps.clone()).unwrap();
        for algorithm in Algorithm::DIFFUSION {
            let settings = DiffusionSettings::new(algorithm, 1.0, None).unwrap();
            let mut policy = DiffusionPolicy::new(settings, 9);
            policy.prepare(&network, caps.clone());
            // the core's engine, one round
            let colouring = network.edge_colouring();
            let gdem = Gdem::new(&colouring, network.gdem_lambda()).unwrap();
            let mut recorded = Vec::new();
            macro_rules! core_round {
                ($rule:expr) => {{
                    let mut e =
                        RoundEngine::new($rule, &network, &loads, Some(&capacities), 9).unwrap();
                    e.step(Some(&mut recorded));
                }};
            }
            let (nearest, random, biased) = (
                FirstOrder::new(Rounding::Nearest),
                FirstOrder::new(Rounding::Random),
                FirstOrder::new(Rounding::Biased),
            );
            match algorithm {
                Algorithm::Dishet => core_round!(&Dishet),
                Algorithm::DishetTight => core_round!(&DishetTight),
                Algorithm::Diffusion => core_round!(&nearest),
                Algorithm::RandomBiasing => core_round!(&random),
                Algorithm::DynamicBiasing => core_round!(&biased),
                _ => core_round!(&gdem),
            }
            let mut orders = Vec::new();
            for node in 0..n {
                // garbage everywhere the node must not look
                if let Some(state) = policy.state.as_mut() {
                    state.loads.fill(1_000_003);
                    state.levels.fill(-7.0);
                }
                let seen: Vec<(usize, u64)> =
                    network.neighbors(node).map(|j| (j, loads[j])).collect();
                policy
                    .decide_node(&network, node, loads[node], &seen, 0, &mut orders)
                    .unwrap();
            }
            let ours: Vec<(usize, usize, u64)> =
                orders.iter().map(|o| (o.from, o.to, o.tasks)).collect();
            let core: Vec<(usize, usize, u64)> =
                recorded.iter().map(|t| (t.from, t.to, t.units)).collect();
            assert_eq!(ours, core, "{algorithm}");
            assert!(!core.is_empty(), "{algorithm} moved nothing");
        }
    }

    #[test]
    fn refuses_what_it_cannot_run() {
        use hetlb_core::Algorithm;
        let oem = Algorithm::Oem;
        let new = DiffusionSettings::new;
        assert!(new(oem, 1.0, None).is_err());
        assert!(new(Algorithm::Dishet, 0.0, None).is_err());
        assert!(new(Algorithm::Dishet, f64::INFINITY, None).is_err());
        assert!(new(Algorithm::Dishet, 1.0, Some(0.5)).is_err());
        assert!(new(Algorithm::Gdem, 1.0, Some(1.0)).is_err());
        assert!(new(Algorithm::Gdem, 1.0, Some(0.3)).is_ok());
    }
}
