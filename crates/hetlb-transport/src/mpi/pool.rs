//! Byte buffers of finished messages, kept for the next large ones.
//!
//! A message is encoded into a buffer that MPI reads until the send completes, and received
//! into a buffer that lives until the message is decoded. Allocated afresh each time, a large
//! buffer is new memory the kernel maps page by page on first touch — on the development
//! machine (2 cores of a virtualised AMD EPYC) about 3 µs per 4 KiB page, 0.75 ms per MiB,
//! which is as long as the `MPI_Alltoallv` of that MiB. The allocator returns freed large
//! blocks to the kernel, so every call of a rebalance paid it again. Kept here, the buffers
//! of one call serve the next.
//!
//! At most [`KEPT`] buffers of [`MIN_KEPT`] to [`MAX_KEPT`] bytes are kept, process-wide: a
//! small buffer is cheap to allocate, and a huge one is not worth holding on to.

use std::sync::{Mutex, PoisonError};

/// Buffers kept at most.
pub(super) const KEPT: usize = 4;
/// The smallest capacity worth keeping.
pub(super) const MIN_KEPT: usize = 64 << 10;
/// The largest capacity kept.
pub(super) const MAX_KEPT: usize = 64 << 20;

static FREE: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// An empty buffer with room for at least `len` bytes: a kept one when one is large enough
/// (the smallest such), a new one otherwise.
pub(super) fn take(len: usize) -> Vec<u8> {
    if len >= MIN_KEPT {
        let mut free = FREE.lock().unwrap_or_else(PoisonError::into_inner);
        let fitting = free
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= len)
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i);
        if let Some(i) = fitting {
            return free.swap_remove(i);
        }
    }
    Vec::with_capacity(len)
}

/// The largest kept buffer, emptied, for a message whose size is not known before it is
/// encoded; a new empty one when none is kept.
pub(super) fn take_largest() -> Vec<u8> {
    let mut free = FREE.lock().unwrap_or_else(PoisonError::into_inner);
    let largest = free
        .iter()
        .enumerate()
        .max_by_key(|(_, b)| b.capacity())
        .map(|(i, _)| i);
    largest.map_or_else(Vec::new, |i| free.swap_remove(i))
}

/// `buffer` itself when its message is large, else a copy sized to the message, the large
/// buffer kept: a send that never completes (to a peer that died) holds its buffer for ever,
/// and a small message must not hold a large one.
pub(super) fn fitted(buffer: Vec<u8>) -> Vec<u8> {
    if buffer.len() >= MIN_KEPT || buffer.capacity() < MIN_KEPT {
        return buffer;
    }
    let small = buffer.to_vec();
    give(buffer);
    small
}

/// Keeps `buffer` for a later message when it is worth keeping and there is room (a larger
/// one replaces the smallest kept).
pub(super) fn give(mut buffer: Vec<u8>) {
    let capacity = buffer.capacity();
    if !(MIN_KEPT..=MAX_KEPT).contains(&capacity) {
        return;
    }
    buffer.clear();
    let mut free = FREE.lock().unwrap_or_else(PoisonError::into_inner);
    if free.len() < KEPT {
        free.push(buffer);
    } else if let Some(smallest) = free.iter_mut().min_by_key(|b| b.capacity())
        && smallest.capacity() < capacity
    {
        *smallest = buffer;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pool is process-wide: one test touches it, start to end.
    #[test]
    fn buffers_are_kept_within_bounds_and_handed_out_smallest_fitting() {
        // drain whatever another use left
        while take_largest().capacity() > 0 {}
        give(Vec::with_capacity(MIN_KEPT - 1)); // too small
        give(Vec::with_capacity(MAX_KEPT + 1)); // too large
        assert_eq!(take_largest().capacity(), 0);
        for k in 1..=KEPT + 2 {
            give(Vec::with_capacity(k * MIN_KEPT));
        }
        // the KEPT largest were kept; a request gets the smallest that fits, emptied
        let mut b = take(2 * MIN_KEPT + 1);
        assert_eq!(b.capacity(), 3 * MIN_KEPT);
        assert!(b.is_empty());
        b.push(1);
        give(b);
        assert!(take(MIN_KEPT).is_empty());
        // a small message encoded in a kept buffer leaves it with a copy of its own
        let mut large = take_largest();
        assert_eq!(large.capacity(), 6 * MIN_KEPT);
        large.extend_from_slice(b"ack");
        let small = fitted(large);
        assert_eq!((small.as_slice(), small.capacity()), (&b"ack"[..], 3));
        assert_eq!(take(6 * MIN_KEPT).capacity(), 6 * MIN_KEPT, "given back");
        let big = fitted(vec![7u8; MIN_KEPT]);
        assert_eq!(big.len(), MIN_KEPT);
        // a request larger than every kept buffer gets a new one
        assert!(take(MAX_KEPT).capacity() >= MAX_KEPT);
        let mut seen = Vec::new();
        loop {
            let b = take_largest();
            if b.capacity() == 0 {
                break;
            }
            seen.push(b.capacity() / MIN_KEPT);
        }
        assert!(
            seen.len() < KEPT && seen.iter().all(|&k| k >= 3),
            "{seen:?}"
        );
    }
}
