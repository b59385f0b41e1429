//! A hint to the processor to start loading memory an event is about to touch.
//!
//! At 10^6 nodes the records of consecutive events are far apart in hundreds of megabytes, so
//! every visit waits for memory; asking for the next event's record while the current one is
//! handled overlaps the two. A prefetch changes no value and cannot fault, whatever the
//! address, so results are the same with or without it.
#![allow(unsafe_code)]

/// Starts loading the cache line that holds `*value`, and the `lines − 1` after it.
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T, lines: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let first = (value as *const T).cast::<i8>();
        for line in 0..lines {
            // SAFETY: `prefetch` is a hint: it reads nothing into the program, never faults
            // and never writes, whatever the address (`wrapping_add` keeps the pointer
            // arithmetic defined even past the value); SSE is part of every x86-64 target.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(64 * line)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (value, lines);
    }
}
