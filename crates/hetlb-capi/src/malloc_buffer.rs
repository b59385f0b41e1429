//! The application's `malloc`'ed record array as a [`RecordBuffer`]: what `hetlb_rebalance`
//! hands the protocol. It grows with `realloc` (only before a rank votes, so a failed growth
//! rolls the call back) and never shrinks.
#![allow(unsafe_code)]

use hetlb_peer::{RecordBuffer, StoreError};

/// A `malloc`'ed array: `len` bytes of records in an allocation of at least `cap` bytes.
#[derive(Debug)]
pub struct MallocBuffer {
    ptr: *mut u8,
    len: usize,
    cap: usize,
}

impl MallocBuffer {
    /// The array at `ptr` holding `len` bytes (its allocation is at least that).
    ///
    /// # Safety
    /// `ptr` is NULL (with `len == 0`) or a pointer from `malloc`/`realloc` to at least `len`
    /// initialised bytes, which this value may `realloc` and nothing else uses meanwhile.
    pub unsafe fn new(ptr: *mut u8, len: usize) -> Self {
        Self { ptr, len, cap: len }
    }

    /// The (possibly moved) array and its length in bytes: the caller owns it again.
    pub fn into_raw(self) -> (*mut u8, usize) {
        (self.ptr, self.len)
    }
}

impl RecordBuffer for MallocBuffer {
    fn bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `ptr` holds `len` initialised bytes (the constructor's contract, kept by
        // every method).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        if self.len == 0 {
            return &mut [];
        }
        // SAFETY: as above; `&mut self` makes it exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    fn reserve_total(&mut self, total: usize) -> Result<(), StoreError> {
        if total <= self.cap {
            return Ok(());
        }
        // SAFETY: `ptr` is NULL or from malloc/realloc (the constructor's contract).
        let p = unsafe { libc::realloc(self.ptr.cast(), total) };
        if p.is_null() {
            return Err(StoreError::NoRoom {
                items: total,
                bytes_each: 1,
                reason: "realloc failed".into(),
            });
        }
        self.ptr = p.cast();
        self.cap = total;
        Ok(())
    }

    fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    fn extend_from_slice(&mut self, bytes: &[u8]) {
        let end = self.len + bytes.len();
        if end > self.cap {
            // Outside the room reserved (the protocol never does this): grow, or stop loudly
            // (a panic, turned into HETLB_ERR_INTERNAL at the boundary).
            let grown = end.max(self.cap.saturating_mul(2));
            if self.reserve_total(grown).is_err() {
                panic!("records: no room for {end} bytes outside the reserved room");
            }
        }
        // SAFETY: `ptr` has room for `end` bytes; `bytes` is another buffer (a message's).
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.add(self.len), bytes.len());
        }
        self.len = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetlb_peer::{Balancer, BalancerConfig, Bytes, Records};
    use hetlb_transport::threads;

    /// A malloc'ed array of records (id, !id, id²), 24 bytes each.
    fn malloced(ids: std::ops::Range<u64>) -> MallocBuffer {
        let bytes: Vec<u8> = ids
            .flat_map(|id| [id, !id, id.wrapping_mul(id)])
            .flat_map(u64::to_ne_bytes)
            .collect();
        if bytes.is_empty() {
            // SAFETY: NULL with no records.
            return unsafe { MallocBuffer::new(std::ptr::null_mut(), 0) };
        }
        // SAFETY: a fresh allocation of bytes.len() bytes, filled at once.
        unsafe {
            let p: *mut u8 = libc::malloc(bytes.len()).cast();
            assert!(!p.is_null());
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len());
            MallocBuffer::new(p, bytes.len())
        }
    }

    #[test]
    fn grows_by_realloc_truncates_and_hands_back() {
        let mut b = malloced(0..3);
        assert_eq!(b.bytes().len(), 72);
        b.reserve_total(1000).unwrap();
        b.extend_from_slice(&[7u8; 24]);
        assert_eq!(b.bytes().len(), 96);
        assert_eq!(b.bytes()[72..], [7u8; 24]);
        b.truncate(24);
        assert_eq!(b.bytes().len(), 24);
        b.bytes_mut()[0] = 9;
        let (p, len) = b.into_raw();
        assert_eq!(len, 24);
        // SAFETY: from realloc; freed once.
        unsafe { libc::free(p.cast()) };
        // Empty: NULL until something arrives.
        let mut e = malloced(0..0);
        assert!(e.bytes().is_empty());
        e.reserve_total(48).unwrap();
        e.extend_from_slice(&[1u8; 48]);
        let (p, len) = e.into_raw();
        assert!(!p.is_null() && len == 48);
        // SAFETY: from realloc; freed once.
        unsafe { libc::free(p.cast()) };
    }

    /// The protocol on malloc'ed arrays, as hetlb_rebalance runs it (threads instead of MPI
    /// ranks): every record is held exactly once and arrives whole, on the ranks that grew
    /// from nothing (realloc of NULL) as on the others.
    #[test]
    fn records_in_malloced_arrays_are_rebalanced_exactly_once() {
        let ranks = 4;
        let handles: Vec<_> = threads::group(ranks)
            .into_iter()
            .map(|member| {
                std::thread::spawn(move || {
                    let r = member.rank() as u64;
                    // Rank 0 holds 0..3000, rank 2 holds 3000..3100, the others nothing.
                    let ids = match r {
                        0 => 0..3000,
                        2 => 3000..3100,
                        _ => 0..0,
                    };
                    let mut buffer = malloced(ids);
                    let mut b: Balancer<Bytes, _> =
                        Balancer::new(&member, BalancerConfig::new("dem").unwrap()).unwrap();
                    let mut records = Records::new(&mut buffer, 24, 0).unwrap();
                    b.rebalance(&mut records).unwrap();
                    let held: Vec<[u64; 3]> = buffer
                        .bytes()
                        .chunks_exact(24)
                        .map(|c| {
                            std::array::from_fn(|k| {
                                u64::from_ne_bytes(c[8 * k..8 * k + 8].try_into().unwrap())
                            })
                        })
                        .collect();
                    let (p, _) = buffer.into_raw();
                    // SAFETY: from malloc/realloc; freed once.
                    unsafe { libc::free(p.cast()) };
                    held
                })
            })
            .collect();
        let per_rank: Vec<Vec<[u64; 3]>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        for held in &per_rank {
            assert_eq!(held.len(), 775, "an even share");
            for &[id, not, sq] in held {
                assert_eq!((not, sq), (!id, id.wrapping_mul(id)), "record {id} torn");
            }
        }
        let mut all: Vec<u64> = per_rank.iter().flatten().map(|r| r[0]).collect();
        all.sort_unstable();
        assert_eq!(all, (0..3100).collect::<Vec<u64>>());
    }
}
