//! Node and link models: what the engine asks about time, and nothing else.
//!
//! The engine is generic over a [`NodeModel`] (how long a task takes at a node) and a
//! [`LinkModel`] (which nodes are joined, how fast a link moves tasks, how long its messages
//! are delayed), in the manner of dslab's network models. [`Nodes`] and [`Links`] are the
//! models the scenarios use: per-node rates with deterministic or exponential (Poisson
//! completions) service, and per-link rates with deterministic or exponential delays.

use crate::network::LinkTable;
use crate::prefetch::HugePages;
use crate::rng::exponential;
use hetlb_core::topology::Network;
use rand_pcg::Pcg64;

/// How long tasks take at the nodes.
pub trait NodeModel {
    /// Number of nodes.
    fn node_count(&self) -> usize;

    /// Mean execution rate `λ_i` of `node` in tasks per second (what balancing policies
    /// assume).
    fn rate(&self, node: usize) -> f64;

    /// The service time of the next task started at `node`, drawn from `rng` if random.
    fn service_time(&self, node: usize, rng: &mut Pcg64) -> f64;

    /// The one value of `node`'s own that [`NodeModel::service_time`] reads (for
    /// [`Nodes`], its mean service time), which the engine asks once and keeps in the node's
    /// record: at 10^6 nodes a service that read it from the model's own table paid a second
    /// scattered memory access per event. The default is 0, for models that read nothing of
    /// the node's or look it up themselves.
    fn service_parameter(&self, node: usize) -> f64 {
        let _ = node;
        0.0
    }

    /// [`NodeModel::service_time`] given what [`NodeModel::service_parameter`] answered for
    /// `node`: the same value, drawn from `rng` the same way. The default looks it up again.
    ///
    /// # Example
    /// ```
    /// use hetlb_sim::model::{Distribution, NodeModel, Nodes};
    /// let nodes = Nodes::new(vec![500.0, 250.0], Distribution::Exponential);
    /// let stream = || hetlb_sim::rng::stream(7, hetlb_sim::rng::Purpose::Service, 1);
    /// let kept = nodes.service_parameter(1);
    /// assert_eq!(
    ///     nodes.service_time_with(1, kept, &mut stream()),
    ///     nodes.service_time(1, &mut stream()),
    /// );
    /// ```
    #[inline]
    fn service_time_with(&self, node: usize, parameter: f64, rng: &mut Pcg64) -> f64 {
        let _ = parameter;
        self.service_time(node, rng)
    }

    /// Asks the processor to start loading what [`NodeModel::service_time_with`] will read
    /// for `node` beyond its record, a few events before it is asked (a hint: the default
    /// does nothing).
    #[inline]
    fn prefetch(&self, _node: usize) {}
}

/// Which nodes are joined and how links behave.
pub trait LinkModel {
    /// The network.
    fn network(&self) -> &Network;

    /// Its directed links, numbered: the `link` arguments below.
    fn table(&self) -> &LinkTable;

    /// Transfer rate of directed link `link` in tasks per second (may be infinite).
    fn rate(&self, link: usize) -> f64;

    /// Mean communication delay of `link` in seconds.
    fn mean_delay(&self, link: usize) -> f64;

    /// The delay of one message (one batch of tasks) on `link`, drawn from `rng` if random.
    fn delay(&self, link: usize, rng: &mut Pcg64) -> f64;
}

/// A distribution of durations with a given mean.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Distribution {
    /// Always the mean.
    #[default]
    Deterministic,
    /// Exponential with that mean: for service times, Poisson task completions.
    Exponential,
}

impl Distribution {
    /// A draw with the given mean.
    ///
    /// # Example
    /// ```
    /// use hetlb_sim::model::Distribution;
    /// let mut rng = hetlb_sim::rng::stream(0, hetlb_sim::rng::Purpose::Service, 0);
    /// assert_eq!(Distribution::Deterministic.sample(0.25, &mut rng), 0.25);
    /// assert!(Distribution::Exponential.sample(0.25, &mut rng) > 0.0);
    /// ```
    pub fn sample(self, mean: f64, rng: &mut Pcg64) -> f64 {
        match self {
            Distribution::Deterministic => mean,
            Distribution::Exponential => {
                if mean == 0.0 {
                    0.0
                } else {
                    exponential(rng, mean)
                }
            }
        }
    }
}

/// Nodes with their own execution rates and one service distribution.
///
/// # Example
/// ```
/// use hetlb_sim::model::{Distribution, NodeModel, Nodes};
/// let nodes = Nodes::new(vec![500.0, 250.0], Distribution::Deterministic);
/// let mut rng = hetlb_sim::rng::stream(0, hetlb_sim::rng::Purpose::Service, 1);
/// assert_eq!(nodes.service_time(1, &mut rng), 1.0 / 250.0);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Nodes {
    rates: Vec<f64>,
    means: HugePages<f64>,
    service: Distribution,
}

impl Nodes {
    /// Nodes with execution `rates` (tasks per second, positive and finite: the caller
    /// validates).
    pub fn new(rates: Vec<f64>, service: Distribution) -> Self {
        let means = HugePages::collect(rates.len(), rates.iter().map(|r| 1.0 / r));
        Self {
            rates,
            means,
            service,
        }
    }

    /// The service distribution.
    pub fn service(&self) -> Distribution {
        self.service
    }
}

impl NodeModel for Nodes {
    fn node_count(&self) -> usize {
        self.rates.len()
    }

    fn rate(&self, node: usize) -> f64 {
        self.rates[node]
    }

    #[inline]
    fn service_time(&self, node: usize, rng: &mut Pcg64) -> f64 {
        self.service.sample(self.means[node], rng)
    }

    /// The node's mean service time, `1 / rate`.
    fn service_parameter(&self, node: usize) -> f64 {
        self.means[node]
    }

    #[inline]
    fn service_time_with(&self, _node: usize, mean: f64, rng: &mut Pcg64) -> f64 {
        self.service.sample(mean, rng)
    }
}

/// The parameters of one directed link.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkParams {
    /// Tasks per second; `f64::INFINITY` moves any batch at once.
    pub rate: f64,
    /// Mean communication delay in seconds.
    pub delay: f64,
    /// Distribution of the delay.
    pub distribution: Distribution,
}

impl LinkParams {
    /// A link without transfer time or delay.
    pub const INSTANT: LinkParams = LinkParams {
        rate: f64::INFINITY,
        delay: 0.0,
        distribution: Distribution::Deterministic,
    };
}

/// A network whose directed links each have their [`LinkParams`].
///
/// While every link has the same parameters (as [`Links::uniform`] makes them) they are held
/// once; the first [`Links::set`] that makes two links differ gives every link its own. A
/// cube of 2^20 nodes has 21 million directed links, whose parameters would otherwise take
/// 500 MB and a random memory visit per transfer.
///
/// # Example
/// ```
/// use hetlb_sim::model::{LinkModel, LinkParams, Links};
/// use hetlb_core::topology::TopologySpec;
/// let ring = "ring:3".parse::<TopologySpec>().unwrap().build().unwrap();
/// let mut links = Links::uniform(ring, LinkParams::INSTANT);
/// assert_eq!(links.rate(0), f64::INFINITY);
/// assert_eq!(links.table().link_count(), 6);
/// let slow = LinkParams { rate: 10.0, ..LinkParams::INSTANT };
/// assert!(links.set(0, 1, slow));
/// assert_eq!(links.params(links.table().link(1, 0).unwrap()), slow);
/// assert_eq!(links.rate(links.table().link(1, 2).unwrap()), f64::INFINITY);
/// ```
#[derive(Debug, Clone)]
pub struct Links {
    network: Network,
    table: LinkTable,
    /// Every link's parameters while `per_link` is empty.
    shared: LinkParams,
    /// Each link's parameters, once two links differ (empty until then).
    per_link: HugePages<LinkParams>,
}

impl Links {
    /// Every link of `network` (any of the core's networks) with the same parameters.
    pub fn uniform(network: Network, params: LinkParams) -> Self {
        let table = LinkTable::new(&network);
        Self {
            network,
            table,
            shared: params,
            per_link: HugePages::default(),
        }
    }

    /// Sets the parameters of both directions of the edge `a – b`; false if there is no
    /// such edge.
    pub fn set(&mut self, a: usize, b: usize, params: LinkParams) -> bool {
        match (self.table.link(a, b), self.table.link(b, a)) {
            (Some(x), Some(y)) => {
                if self.per_link.is_empty() {
                    if params == self.shared {
                        return true;
                    }
                    let count = self.table.link_count();
                    self.per_link =
                        HugePages::collect(count, std::iter::repeat_n(self.shared, count));
                }
                self.per_link[x] = params;
                self.per_link[y] = params;
                true
            }
            _ => false,
        }
    }

    /// The parameters of directed link `link`.
    ///
    /// # Panics
    /// When `link` is not below [`LinkTable::link_count`].
    pub fn params(&self, link: usize) -> LinkParams {
        if self.per_link.is_empty() {
            assert!(link < self.table.link_count(), "link {link} out of range");
            self.shared
        } else {
            self.per_link[link]
        }
    }
}

impl PartialEq for Links {
    /// The same network, and the same parameters on every link, however they are held.
    fn eq(&self, other: &Self) -> bool {
        self.network == other.network
            && self.table == other.table
            && (0..self.table.link_count()).all(|l| self.params(l) == other.params(l))
    }
}

impl LinkModel for Links {
    fn network(&self) -> &Network {
        &self.network
    }

    fn table(&self) -> &LinkTable {
        &self.table
    }

    fn rate(&self, link: usize) -> f64 {
        self.params(link).rate
    }

    fn mean_delay(&self, link: usize) -> f64 {
        self.params(link).delay
    }

    fn delay(&self, link: usize, rng: &mut Pcg64) -> f64 {
        let p = self.params(link);
        p.distribution.sample(p.delay, rng)
    }
}
