//! Each rank's own capacity (`speeds=own:C`): the call gathers them, and the loads end in
//! proportion to them; a capacity-blind rule refuses them.

use hetlb_peer::{Balancer, BalancerConfig};
use hetlb_transport::threads;

#[test]
fn own_capacities_are_gathered_and_followed() {
    const RANKS: usize = 4;
    const ITEMS: u64 = 10_000;
    let handles: Vec<_> = threads::group(RANKS)
        .into_iter()
        .map(|member| {
            std::thread::spawn(move || {
                let rank = member.rank();
                let cfg = BalancerConfig::new("cwa")
                    .unwrap()
                    .set("speeds", &format!("own:{}", rank + 1))
                    .unwrap();
                let mut b = Balancer::new(&member, cfg).unwrap();
                let mut mine: Vec<u64> = if rank == 0 {
                    (0..ITEMS).collect()
                } else {
                    Vec::new()
                };
                let report = b.rebalance(&mut mine).unwrap();
                (report, mine.len() as u64)
            })
        })
        .collect();
    let out: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let report = &out[0].0;
    assert_eq!(
        report.capacities.as_deref(),
        Some(&[1.0, 2.0, 3.0, 4.0][..])
    );
    for (rank, (_, held)) in out.iter().enumerate() {
        let target = ITEMS as f64 * (rank + 1) as f64 / 10.0;
        assert!(
            (*held as f64 - target).abs() <= 1.0,
            "rank {rank}: {held} against {target}"
        );
    }
    assert_eq!(out.iter().map(|(_, h)| h).sum::<u64>(), ITEMS);
}

#[test]
fn a_capacity_blind_rule_refuses_capacities() {
    let e = BalancerConfig::new("oem")
        .unwrap()
        .set("speeds", "own:2")
        .unwrap();
    let member = threads::group(1).pop().unwrap();
    let text = Balancer::<u64, _>::new(&member, e).unwrap_err().to_string();
    assert!(text.contains("capacity-blind"), "{text}");
}
