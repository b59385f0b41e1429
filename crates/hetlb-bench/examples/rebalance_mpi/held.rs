//! How a rank holds its items in the `--mode` form: typed items (`Vec<Item64>`, serialised
//! by serde, as a Rust application holds them) or byte records of 64 bytes in one buffer
//! (`Records`, as the C and Fortran interfaces and the Python arrays hand them over).

use hetlb_bench::call::encode_record;
use hetlb_bench::rebalance::Item64;
use hetlb_peer::{Balancer, BalancerConfig, Bytes, ItemKind, PeerError, Records, Report};
use hetlb_transport::mpi::Mpi;

/// A rank's items as one storage holds them, and the calls on them.
pub trait Held: Sized {
    /// The balancer's item kind for this storage.
    type Kind: ItemKind;
    /// The items of `start`, in this storage.
    fn from_items(start: Vec<Item64>) -> Self;
    /// One `rebalance`.
    fn rebalance(&mut self, b: &mut Balancer<Self::Kind, Mpi<'_>>) -> Result<Report, PeerError>;
    /// `plan`, then `migrate`.
    fn two_step(&mut self, b: &mut Balancer<Self::Kind, Mpi<'_>>) -> Result<(), PeerError>;
    /// How many items this rank holds, and the sum of their ids (wrapping).
    fn count_and_id_sum(&self) -> [u64; 2];
}

/// A balancer for this storage.
pub fn balancer<'a, H: Held>(
    mpi: &Mpi<'a>,
    config: BalancerConfig,
) -> Result<Balancer<H::Kind, Mpi<'a>>, String> {
    Balancer::new(mpi, config).map_err(|e| e.to_string())
}

impl Held for Vec<Item64> {
    type Kind = Item64;
    fn from_items(start: Vec<Item64>) -> Self {
        start
    }
    fn rebalance(&mut self, b: &mut Balancer<Item64, Mpi<'_>>) -> Result<Report, PeerError> {
        b.rebalance(self)
    }
    fn two_step(&mut self, b: &mut Balancer<Item64, Mpi<'_>>) -> Result<(), PeerError> {
        let plan = b.plan(self)?;
        b.migrate(self, &plan).map(|_| ())
    }
    fn count_and_id_sum(&self) -> [u64; 2] {
        [
            self.len() as u64,
            self.iter().fold(0u64, |s, i| s.wrapping_add(i.id)),
        ]
    }
}

/// Byte records of 64 bytes, the id in the first 8 (little-endian), end to end.
pub struct RecordBytes(Vec<u8>);

const RECORD: usize = 64;

impl RecordBytes {
    fn records(&mut self) -> Records<'_> {
        Records::new(&mut self.0, RECORD, 0).expect("64-byte records with the id at 0")
    }
}

impl Held for RecordBytes {
    type Kind = Bytes;
    fn from_items(start: Vec<Item64>) -> Self {
        let mut bytes = vec![0u8; start.len() * RECORD];
        for (slot, item) in bytes.chunks_exact_mut(RECORD).zip(&start) {
            encode_record(item, slot);
        }
        Self(bytes)
    }
    fn rebalance(&mut self, b: &mut Balancer<Bytes, Mpi<'_>>) -> Result<Report, PeerError> {
        b.rebalance(&mut self.records())
    }
    fn two_step(&mut self, b: &mut Balancer<Bytes, Mpi<'_>>) -> Result<(), PeerError> {
        let mut records = self.records();
        let plan = b.plan(&records)?;
        b.migrate(&mut records, &plan).map(|_| ())
    }
    fn count_and_id_sum(&self) -> [u64; 2] {
        let sum = self.0.chunks_exact(RECORD).fold(0u64, |s, r| {
            let mut id = [0u8; 8];
            id.copy_from_slice(&r[..8]);
            s.wrapping_add(u64::from_le_bytes(id))
        });
        [(self.0.len() / RECORD) as u64, sum]
    }
}
