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

use super::{Burst, Schedule, Togo, TransmissionError};

/// Returns `(steps, steps, bursts)`.
pub(super) fn run(
    initial: &[u64],
    mut togo: Togo,
) -> Result<(u64, u64, Vec<Burst>), TransmissionError> {
    let n = togo.n as usize;
    let nodes = initial.len();
    let mut current = initial.to_vec();
    let mut incoming = vec![0u64; nodes];
    let mut last = vec![n.saturating_sub(1); nodes];
    let mut pending = togo.total();
    let mut active: Vec<usize> = (0..nodes)
        .filter(|&k| togo.units[k * n..(k + 1) * n].iter().any(|&u| u > 0))
        .collect();
    // open[k * n + m]: the burst on link (k, dimension m) still being extended, if any.
    let mut open: Vec<Option<usize>> = vec![None; nodes * n];
    let mut bursts: Vec<Burst> = Vec::new();
    let mut step = 0u64;
    while pending > 0 {
        let mut sent_any = false;
        for &k in &active {
            if current[k] == 0 {
                continue;
            }
            let next = (1..=n)
                .map(|i| (last[k] + i) % n)
                .find(|&m| togo.units[k * n + m] > 0);
            let Some(m) = next else { continue };
            let slot = k * n + m;
            togo.units[slot] -= 1;
            current[k] -= 1;
            pending -= 1;
            sent_any = true;
            last[k] = m;
            let to = k ^ (1 << m);
            incoming[to] += 1;
            match open[slot] {
                Some(b) if bursts[b].start + bursts[b].len == step => bursts[b].len += 1,
                _ => {
                    open[slot] = Some(bursts.len());
                    bursts.push(Burst {
                        from: k,
                        to,
                        start: step,
                        len: 1,
                    });
                }
            }
        }
        if !sent_any {
            return Err(TransmissionError::Stalled {
                schedule: Schedule::PipelinePerProcessor,
                step,
                pending,
            });
        }
        for (held, inc) in current.iter_mut().zip(incoming.iter_mut()) {
            *held += std::mem::take(inc);
        }
        active.retain(|&k| togo.units[k * n..(k + 1) * n].iter().any(|&u| u > 0));
        step += 1;
    }
    Ok((step, step, bursts))
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
