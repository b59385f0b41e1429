//! The centre's plan carried out by the centre alone or by the whole neighbourhood
//! (Mirtaheri & Grandinetti 2017, §4: the paper plans `L_il(r)` for every overloaded member
//! `r`, e.g. `L_51(4)`).
//!
//! In the paper's own scenarios only the centre is overloaded, so both readings coincide. The
//! comparison runs the scenario `mirtaheri-neighbourhood` (also
//! `examples/simulator/mirtaheri-neighbourhood.toml`), where a neighbour of the
//! centre is overloaded too, over slow and instant links, with `k = 1` and with eq. 25.

use hetlb_core::rules::delay_aware::Compensation;
use hetlb_sim::model::{LinkModel, LinkParams, Links};
use hetlb_sim::policy::CarryOut;
use hetlb_sim::scenario::PolicySpec;
use serde::Serialize;

use super::MirtaheriError;

/// One run of the comparison.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Row {
    /// Transfer rate of every link (tasks/s; infinite: instant).
    pub link_rate: f64,
    /// `k = 1` or eq. 25.
    pub compensation: Compensation,
    /// Whose transfers were carried out.
    pub carry: CarryOut,
    /// Finish time.
    pub makespan: f64,
    /// Total idle time.
    pub total_idle: f64,
    /// Tasks moved.
    pub tasks_moved: u64,
    /// Transfer orders carried out.
    pub transfers: u64,
}

/// Runs the comparison (deterministic execution): links at 100 tasks/s and instant, `k = 1`
/// and eq. 25, the centre's transfers and the whole plan; eight runs, in that order.
///
/// # Errors
/// [`MirtaheriError`] if the built-in scenario does not parse or a run fails.
pub fn compare() -> Result<Vec<Row>, MirtaheriError> {
    let base = super::scenario("mirtaheri-neighbourhood")?;
    let mut rows = Vec::new();
    for link_rate in [100.0, f64::INFINITY] {
        for compensation in [Compensation::None, Compensation::Factor] {
            for carry in [CarryOut::Centre, CarryOut::Neighbourhood] {
                let mut s = base.clone();
                s.setup.series.enabled = false;
                s.links = Links::uniform(
                    s.links.network().clone(),
                    LinkParams {
                        rate: link_rate,
                        ..LinkParams::INSTANT
                    },
                );
                s.policy = PolicySpec::DelayAware {
                    compensation,
                    carry,
                };
                let r = s.run()?;
                rows.push(Row {
                    link_rate,
                    compensation,
                    carry,
                    makespan: r.makespan,
                    total_idle: r.total_idle,
                    tasks_moved: r.tasks_moved,
                    transfers: r.transfers,
                });
            }
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_whole_plan_moves_the_neighbours_share_too() {
        let rows = compare().unwrap();
        assert_eq!(rows.len(), 8);
        for pair in rows.chunks(2) {
            let (centre, all) = (&pair[0], &pair[1]);
            assert_eq!(centre.carry, CarryOut::Centre);
            // paper node 4 sends its planned share as well
            assert!(all.tasks_moved > centre.tasks_moved, "{pair:?}");
            assert!(all.transfers > centre.transfers);
        }
        // with instant links and k = 1, the whole plan balances the neighbourhood better
        let instant: Vec<_> = rows.iter().filter(|r| r.link_rate.is_infinite()).collect();
        assert!(instant[1].makespan < instant[0].makespan);
    }
}
