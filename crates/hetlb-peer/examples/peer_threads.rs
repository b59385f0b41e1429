//! Peer rebalancing embedded in an application loop, on threads.
//!
//! Four ranks own particles (the application's own type); rank 0 starts with all of them and
//! rank 3 is three times slower. Every five steps each rank calls `rebalance`, which measures
//! the speeds the ranks report, decides with DISHET and moves particles between ranks.
//!
//! Run: `cargo run --release -p hetlb-peer --example peer_threads`

use hetlb_peer::{Balancer, BalancerConfig, Item, Speeds};
use hetlb_transport::threads;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// The application's item: a particle with an id and some state.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Particle {
    id: u64,
    position: [f64; 3],
    velocity: [f64; 3],
}

impl Item for Particle {
    fn id(&self) -> u64 {
        self.id
    }
}

/// One step of "physics": some CPU work per particle.
fn advance(p: &mut Particle, repeat: u32) {
    for _ in 0..200 * repeat {
        for k in 0..3 {
            p.position[k] += 1e-3 * p.velocity[k];
            p.velocity[k] = (p.velocity[k] * 0.999_9).sin();
        }
    }
}

fn main() {
    let ranks = 4;
    let handles: Vec<_> = threads::group(ranks)
        .into_iter()
        .map(|member| {
            std::thread::spawn(move || {
                let rank = member.rank();
                let slow = if rank == 3 { 3 } else { 1 };
                let mut particles: Vec<Particle> = if rank == 0 {
                    (0..4000)
                        .map(|id| Particle {
                            id,
                            position: [id as f64, 0.0, 0.0],
                            velocity: [1.0, 0.5, 0.25],
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                let config = BalancerConfig::new("dishet")
                    .expect("a known rule")
                    .speeds(Speeds::Measured { window: 3 });
                let mut balancer = Balancer::new(&member, config).expect("a valid configuration");
                for step in 1..=20 {
                    let t = Instant::now();
                    for p in &mut particles {
                        advance(p, slow);
                    }
                    balancer.record(particles.len() as u64, t.elapsed().as_secs_f64());
                    if step % 5 == 0 {
                        let report = balancer.rebalance(&mut particles).expect("rebalance");
                        if rank == 0 {
                            println!(
                                "step {step:>2}: imbalance {:.2} -> {:.2}, loads {:?}",
                                report.imbalance_before, report.imbalance_after, report.loads_after
                            );
                        }
                    }
                }
                particles.len()
            })
        })
        .collect();
    let counts: Vec<usize> = handles
        .into_iter()
        .map(|h| h.join().expect("rank"))
        .collect();
    println!("particles per rank at the end: {counts:?} (rank 3 is three times slower)");
    assert_eq!(counts.iter().sum::<usize>(), 4000);
}
