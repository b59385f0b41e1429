//! The published numbers our experiments are compared with, transcribed from the papers.
//!
//! These are *targets*, printed beside our computed values; nothing in hetlb is derived from
//! them. One module per paper:
//!
//! * [`chau`] — S.-C. Chau and A. W.-C. Fu, *Load Balancing Between Heterogenous Computing
//!   Clusters*: Tables 1–2.
//! * [`rim`] — H. Rim, J.-w. Jang and S. Kim, *A simple reduction of non-uniformity in dynamic
//!   load balancing of quantized loads on hypercube multiprocessors and hiding balancing
//!   overheads*, JCSS 67 (2003): Table 1 and the figures of §§4 and 5.2.
//! * [`efp`] — M. Aldasht, J. Ortega and C. G. Puntonet, *Dynamic load balancing in
//!   heterogeneous clusters: exploitation of the processing power*: Tables 2–6.
//! * [`mirtaheri`] — S. L. Mirtaheri and L. Grandinetti, *Dynamic load balancing in distributed
//!   exascale computing systems*, Cluster Computing (2017): the numbers of §5's text.
//! * [`dishet`] — P. Neelakantan, *Decentralized load balancing in heterogeneous systems using
//!   diffusion approach*, IJDPS 3(1) (2012): what survives of §5.

pub mod chau;
pub mod dishet;
pub mod efp;
pub mod mirtaheri;
pub mod rim;

pub use chau::{CHAU_TABLE1, CHAU_TABLE2, CHAU_TRIALS, ChauRow};
pub use rim::{RIM_TABLE1, RimColumn, rim_column};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcriptions_add_up() {
        for row in CHAU_TABLE1.iter().chain(&CHAU_TABLE2) {
            // The paper's own n = 3 row of Table 1 adds up to 99,999.
            let expected = if row == &CHAU_TABLE1[0] {
                CHAU_TRIALS - 1
            } else {
                CHAU_TRIALS
            };
            assert_eq!(row.counts.iter().sum::<u64>(), expected, "n = {}", row.n);
        }
        let expected = |procs: usize| match procs {
            8 => 1_081_575,
            16 => 30_421_755,
            _ => 350_343_565,
        };
        for col in &RIM_TABLE1 {
            assert_eq!(
                col.counts.iter().sum::<u64>(),
                expected(col.procs),
                "{col:?}"
            );
        }
    }
}
