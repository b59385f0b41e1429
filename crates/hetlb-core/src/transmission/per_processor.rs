//! Rim et al.'s overlapping-and-pipelining pseudo-code read literally (Rim, Jang & Kim 2003 §6.2): one unit
//! per *processor* per step.
//!
//! The pseudo-code's loop body is, for every processor `P_k` with `Current(P_k) > 0`: find the
//! next dimension `m` after `last(P_k)` with `Togo(P_{k,m}) > 0`, send *one* unit over it,
//! `last(P_k) = m`. Taken as written, a processor sends a single unit per step whatever the
//! number of its links, so a processor that must send `u` units needs at least `u` steps. The
//! text's worked example (Fig. 19, 7 T_comm) is only reached when a processor sends one unit
//! on *each* of its links per step, which is what [`super::Schedule::Pipeline`] does. This
//! schedule exists to measure the difference: on Figs. 18–19 (DEM on 15, 1, 1, 1, 1, 1, 1, 1)
//! it takes 12 T_comm, as long as the phased schedule, because processor 000 must send 12
//! units.
//!
//! The search for `m` wraps around (the next dimension after `last` in cyclic order), since
//! taken strictly (`m > last`) a processor that served its highest dimension would never
//! send again; the paper's interleaving ("one unit to 011, the next to 101 and so on")
//! implies the wrap.

use super::steps::Steps;
use super::{Burst, Schedule, Togo, TransmissionError};

/// Returns `(steps, steps, bursts)`.
pub(super) fn run(
    initial: &[u64],
    togo: Togo,
) -> Result<(u64, u64, Vec<Burst>), TransmissionError> {
    let mut s = Steps::new(initial, togo);
    let n = s.n;
    let mut active: Vec<usize> = (0..initial.len()).filter(|&k| s.sending(k)).collect();
    while s.pending > 0 {
        for &k in &active {
            if s.current[k] == 0 {
                continue;
            }
            let next = (1..=n)
                .map(|i| (s.last[k] + i) % n)
                .find(|&m| s.togo.units[k * n + m] > 0);
            if let Some(m) = next {
                s.send(k, m);
            }
        }
        s.end_step(Schedule::PipelinePerProcessor)?;
        active.retain(|&k| s.sending(k));
    }
    Ok(s.finish())
}

#[cfg(test)]
mod tests {
    use crate::transmission::{Schedule, transmit};
    use crate::{Algorithm, BalanceOptions, balance};
    use proptest::prelude::*;

    #[test]
    fn figures_18_and_19_read_literally() {
        let plan = balance(
            Algorithm::Dem,
            &[15, 1, 1, 1, 1, 1, 1, 1],
            &BalanceOptions::default(),
        )
        .unwrap();
        let t = transmit(&plan, Schedule::PipelinePerProcessor).unwrap();
        t.check(&plan).unwrap();
        // processor 000 sends 7 + 3 + 2 units, one per step
        assert_eq!(t.steps, 12);
        assert_eq!(
            "pipeline-per-processor".parse(),
            Ok(Schedule::PipelinePerProcessor)
        );
        assert!(!Schedule::ALL.contains(&Schedule::PipelinePerProcessor));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// The model holds, and no node sends more than one unit per step: the time is at
        /// least the largest number of units one node sends.
        #[test]
        fn one_unit_per_processor_per_step(
            loads in (1u32..=6).prop_flat_map(|n| prop::collection::vec(0u64..60, 1usize << n)),
            alg in prop::sample::select(Algorithm::HYPERCUBE.to_vec()),
        ) {
            let plan = balance(alg, &loads, &BalanceOptions::default()).unwrap();
            let t = transmit(&plan, Schedule::PipelinePerProcessor).unwrap();
            prop_assert!(t.check(&plan).is_ok());
            let mut per_node = vec![0u64; loads.len()];
            for b in &t.bursts {
                per_node[b.from] += b.len;
            }
            prop_assert!(t.steps >= per_node.iter().copied().max().unwrap_or(0));
            let mut busy: Vec<(u64, usize)> = t
                .bursts
                .iter()
                .flat_map(|b| (b.start..b.start + b.len).map(move |s| (s, b.from)))
                .collect();
            busy.sort_unstable();
            prop_assert!(busy.windows(2).all(|w| w[0] != w[1]), "a node sent twice in a step");
        }
    }
}
