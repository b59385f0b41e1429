//! Items with positions: every item still held exactly once, each rank's items a compact
//! region after a move (the report's spread lower than the same move without positions),
//! and a position that is not finite refused on every rank.

use hetlb_core::routing::Routing;
use hetlb_peer::{Balancer, BalancerConfig, Bytes, Item, PeerError, Records, Report};
use hetlb_transport::threads;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Particle {
    id: u64,
    at: [f64; 2],
    cost: u64,
    /// Whether the particle tells its position.
    located: bool,
}

impl Item for Particle {
    fn id(&self) -> u64 {
        self.id
    }
    fn load(&self) -> u64 {
        self.cost
    }
    fn position(&self) -> Option<[f64; 3]> {
        self.located.then_some([self.at[0], self.at[1], 0.0])
    }
}

const RANKS: usize = 4;
const SIDE: u64 = 60;

/// `SIDE²` particles on a grid of the unit square, rank `r` holding the vertical strip
/// `r/4 ≤ x < (r+1)/4`; the particles left of x = 0.15 cost 5 units (a hotspot), the others 1.
fn strips(located: bool) -> Vec<Vec<Particle>> {
    let mut ranks = vec![Vec::new(); RANKS];
    for id in 0..SIDE * SIDE {
        let at = [
            ((id % SIDE) as f64 + 0.5) / SIDE as f64,
            ((id / SIDE) as f64 + 0.5) / SIDE as f64,
        ];
        let cost = if at[0] < 0.15 { 5 } else { 1 };
        let r = ((at[0] * RANKS as f64) as usize).min(RANKS - 1);
        ranks[r].push(Particle {
            id,
            at,
            cost,
            located,
        });
    }
    ranks
}

fn run(start: Vec<Vec<Particle>>, rule: &str, routing: Routing) -> Vec<(Report, Vec<Particle>)> {
    let handles: Vec<_> = threads::group(RANKS)
        .into_iter()
        .zip(start)
        .map(|(member, mut mine)| {
            let rule = rule.to_string();
            std::thread::spawn(move || {
                let cfg = BalancerConfig::new(&rule).unwrap().routing(routing);
                let mut b = Balancer::new(&member, cfg).unwrap();
                let report = b.rebalance(&mut mine).unwrap();
                (report, mine)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

fn ids(out: &[(Report, Vec<Particle>)]) -> Vec<u64> {
    let mut ids: Vec<u64> = out
        .iter()
        .flat_map(|(_, p)| p.iter().map(|x| x.id))
        .collect();
    ids.sort_unstable();
    ids
}

#[test]
fn positioned_items_move_as_regions_and_stay_exactly_once() {
    // Direct routing: each unit moves once, the surplus to the nearest ranks that lack units
    // (hop-by-hop routing forwards items through ranks whose regions they do not border).
    for (rule, routing) in [
        ("cwa", Routing::Direct),
        ("dishet", Routing::Direct),
        ("oem", Routing::Direct),
    ] {
        let with = run(strips(true), rule, routing);
        let without = run(strips(false), rule, routing);
        assert_eq!(ids(&with), (0..SIDE * SIDE).collect::<Vec<_>>());
        assert_eq!(ids(&without), (0..SIDE * SIDE).collect::<Vec<_>>());
        let r = &with[0].0;
        assert!(r.balanced, "{rule}: something moves");
        // The same loads either way: positions choose the items, not the amounts.
        assert_eq!(r.loads_after, without[0].0.loads_after, "{rule}");
        let before = r.spread_before.expect("a spread before");
        let after = r.spread_after.expect("a spread after");
        assert!(without[0].0.spread_after.is_none());
        // Compact strips at the start; the move keeps them compact: lower than moving the
        // same units with items chosen without their positions.
        let unlocated = spread_of(&without);
        assert!(
            (spread_of(&with) - after).abs() < 1e-9,
            "{rule}: the report's spread"
        );
        // Strips of a quarter of the width: sqrt((1/192 + 1/12) / (1/6)) = 0.729.
        assert!((before - 0.729).abs() < 0.01, "{rule}: {before}");
        assert!(
            after < unlocated,
            "{rule}/{routing:?}: {after} vs {unlocated}"
        );
    }
}

/// The spread of what each rank holds, computed from the particles themselves.
fn spread_of(out: &[(Report, Vec<Particle>)]) -> f64 {
    let all: Vec<[f64; 2]> = out
        .iter()
        .flat_map(|(_, p)| p.iter().map(|x| x.at))
        .collect();
    let mean = |v: &[[f64; 2]]| {
        let n = v.len() as f64;
        [
            v.iter().map(|p| p[0]).sum::<f64>() / n,
            v.iter().map(|p| p[1]).sum::<f64>() / n,
        ]
    };
    let ss = |v: &[[f64; 2]], c: [f64; 2]| -> f64 {
        v.iter()
            .map(|p| (p[0] - c[0]).powi(2) + (p[1] - c[1]).powi(2))
            .sum()
    };
    let within: f64 = out
        .iter()
        .map(|(_, p)| {
            let v: Vec<[f64; 2]> = p.iter().map(|x| x.at).collect();
            if v.is_empty() { 0.0 } else { ss(&v, mean(&v)) }
        })
        .sum();
    (within / ss(&all, mean(&all))).sqrt()
}

#[test]
fn a_position_that_is_not_finite_is_refused_on_every_rank() {
    let mut start = strips(true);
    start[2][7].at[1] = f64::NAN;
    let handles: Vec<_> = threads::group(RANKS)
        .into_iter()
        .zip(start)
        .map(|(member, mut mine)| {
            std::thread::spawn(move || {
                let mut b = Balancer::new(&member, BalancerConfig::new("cwa").unwrap()).unwrap();
                let held = mine.len();
                let e = b.rebalance(&mut mine).unwrap_err();
                assert_eq!(mine.len(), held);
                e
            })
        })
        .collect();
    for (rank, h) in handles.into_iter().enumerate() {
        let e = h.join().unwrap();
        if rank == 2 {
            assert!(e.to_string().contains("not finite"), "{e}");
        } else {
            assert!(
                matches!(e, PeerError::Refused { rank: 2, .. }),
                "rank {rank}: {e}"
            );
        }
    }
}

#[test]
fn records_carry_positions_at_an_offset() {
    // 24-byte records: id, then x and y.
    let handles: Vec<_> = threads::group(2)
        .into_iter()
        .map(|member| {
            std::thread::spawn(move || {
                let first = member.rank() == 0;
                let mut buffer: Vec<u8> = (0..if first { 100u64 } else { 0 })
                    .flat_map(|id| {
                        let mut r = id.to_ne_bytes().to_vec();
                        r.extend((id as f64 / 100.0).to_ne_bytes());
                        r.extend(0.5f64.to_ne_bytes());
                        r
                    })
                    .collect();
                let mut b: Balancer<Bytes, _> = Balancer::new(
                    &member,
                    BalancerConfig::new("cwa").unwrap().routing(Routing::Direct),
                )
                .unwrap();
                let mut records = Records::new(&mut buffer, 24, 0)
                    .unwrap()
                    .with_positions(8, 2)
                    .unwrap();
                let report = b.rebalance(&mut records).unwrap();
                let xs: Vec<f64> = (0..records.len())
                    .map(|i| f64::from_ne_bytes(records.record(i)[8..16].try_into().unwrap()))
                    .collect();
                (report, xs)
            })
        })
        .collect();
    let out: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    // Rank 0 sends its half furthest towards rank 1, which had nothing: an arbitrary half
    // is fine, but it is one side of x: the two sets do not interleave.
    assert_eq!(out[0].1.len() + out[1].1.len(), 100);
    assert!(out[0].0.spread_after.is_some());
    assert!(
        Records::new(&mut vec![0u8; 16], 16, 0)
            .unwrap()
            .with_positions(8, 2)
            .is_err()
    );
}

/// `topology=mpi` takes the communicator's neighbourhood; threads have none, and the
/// balancer says so, naming the option, on every rank.
#[test]
fn the_communicators_topology_is_refused_on_threads() {
    let cfg = BalancerConfig::new("dishet")
        .unwrap()
        .set("topology", "mpi")
        .unwrap();
    assert_eq!(cfg.get("topology").unwrap(), "mpi");
    for member in threads::group(2) {
        let e = Balancer::<u64, _>::new(&member, cfg.clone()).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("topology")
                && text.contains("threads")
                && text.contains("MPI_Cart_create"),
            "{text}"
        );
    }
}

/// One rank holds a whole segment: the others each receive a piece of it, so every region
/// is compact afterwards (records carrying their coordinate as a double at byte 0).
#[test]
fn a_segment_held_by_one_rank_is_cut_into_pieces() {
    const N: u64 = 2000;
    let handles: Vec<_> = threads::group(RANKS)
        .into_iter()
        .enumerate()
        .map(|(rank, member)| {
            std::thread::spawn(move || {
                let mut bytes: Vec<u8> = Vec::new();
                if rank == 0 {
                    for id in 0..N {
                        bytes.extend_from_slice(&(id as f64).to_ne_bytes());
                        bytes.extend_from_slice(&id.to_ne_bytes());
                    }
                }
                let cfg = BalancerConfig::new("dishet")
                    .unwrap()
                    .routing(Routing::Direct);
                let mut b: Balancer<Bytes, _> = Balancer::new(&member, cfg).unwrap();
                let mut records = Records::new(&mut bytes, 16, 8)
                    .unwrap()
                    .with_positions(0, 1)
                    .unwrap();
                let report = b.rebalance(&mut records).unwrap();
                let xs: Vec<f64> = bytes
                    .chunks_exact(16)
                    .map(|r| f64::from_ne_bytes(r[..8].try_into().unwrap()))
                    .collect();
                (report, xs)
            })
        })
        .collect();
    let out: Vec<(Report, Vec<f64>)> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let total: usize = out.iter().map(|(_, xs)| xs.len()).sum();
    assert_eq!(total as u64, N);
    let r = &out[0].0;
    assert!((r.spread_before.unwrap() - 1.0).abs() < 1e-9);
    let after = r.spread_after.unwrap();
    // Four contiguous quarters give 0.25.
    assert!(
        after < 0.3,
        "spread after {after}: {:?}",
        out.iter()
            .map(|(_, xs)| (
                xs.len(),
                xs.iter().cloned().fold(f64::MAX, f64::min),
                xs.iter().cloned().fold(f64::MIN, f64::max)
            ))
            .collect::<Vec<_>>()
    );
}

fn run_with(start: Vec<Vec<Particle>>, cfg: BalancerConfig) -> Vec<(Report, Vec<Particle>)> {
    let handles: Vec<_> = threads::group(RANKS)
        .into_iter()
        .zip(start)
        .map(|(member, mut mine)| {
            let cfg = cfg.clone();
            std::thread::spawn(move || {
                let mut b = Balancer::new(&member, cfg).unwrap();
                let report = b.rebalance(&mut mine).unwrap();
                (report, mine)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

/// Without a topology, a diffusion rule on positioned items runs on the graph of the regions
/// that border each other (four strips: a path), so even hop-by-hop routing moves items only
/// between neighbouring strips; on the hypercube strips 0 and 3 are neighbours.
#[test]
fn diffusion_follows_the_geometry_without_a_topology() {
    let geometric = run_with(strips(true), BalancerConfig::new("dishet").unwrap());
    assert_eq!(geometric[0].0.topology, "geometric");
    assert_eq!(ids(&geometric), (0..SIDE * SIDE).collect::<Vec<_>>());
    let cube = run_with(
        strips(true),
        BalancerConfig::new("dishet")
            .unwrap()
            .topology("hypercube:2")
            .unwrap(),
    );
    assert_eq!(cube[0].0.topology, "hypercube:2");
    assert!(
        spread_of(&geometric) <= spread_of(&cube) + 1e-9,
        "{} vs {}",
        spread_of(&geometric),
        spread_of(&cube)
    );
    // Without positions the default network stays.
    let plain = run_with(strips(false), BalancerConfig::new("dishet").unwrap());
    assert_eq!(plain[0].0.topology, "hypercube:2");
    // Named explicitly, and refused for a rule that needs the hypercube.
    let named = BalancerConfig::new("diffusion")
        .unwrap()
        .set("topology", "geometric")
        .unwrap();
    assert_eq!(run_with(strips(true), named)[0].0.topology, "geometric");
    let cwa = BalancerConfig::new("cwa")
        .unwrap()
        .set("topology", "geometric")
        .unwrap();
    let member = threads::group(1).pop().unwrap();
    let e = Balancer::<u64, _>::new(&member, cwa)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("geometric") && e.contains("routing=direct"),
        "{e}"
    );
}
