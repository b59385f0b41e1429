//! Hints about memory: to the processor, to start loading what an event is about to touch
//! ([`prefetch`]); to the kernel, to back the node records and the other vectors events visit
//! at random with huge pages ([`huge_page_vec`], [`huge_page_collect`]).
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

/// Bytes of a transparent huge page on x86-64 Linux.
const HUGE_PAGE: usize = 2 << 20;

/// A vector with room for `len` values whose memory the kernel is asked, before any of it is
/// touched, to back with transparent huge pages where that memory spans whole 2 MiB pages.
///
/// The node records of a large cube are visited in random order; with 4 KiB pages nearly every
/// visit also misses the processor's translation caches, which a 2 MiB page covers 512 times
/// over. Linux's default for transparent huge pages is often `madvise` (on only where asked);
/// elsewhere, or when the kernel declines, this is an ordinary `Vec::with_capacity`. The hint
/// changes no value: results are the same with or without it.
pub(crate) fn huge_page_vec<T>(len: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(len);
    let bytes = len.saturating_mul(std::mem::size_of::<T>());
    if bytes >= 2 * HUGE_PAGE {
        advise_huge_pages(v.as_ptr().cast::<u8>(), bytes);
    }
    v
}

/// The values of `values` (exactly `len` of them, or fewer) in a [`huge_page_vec`]: for the
/// other per-node and per-link vectors that events visit at random (loads, status reports,
/// link streams, the time each link is free, mean service times, the link table's offsets).
pub(crate) fn huge_page_collect<T>(len: usize, values: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut v = huge_page_vec(len);
    v.extend(values.into_iter().take(len));
    v
}

/// A vector that events visit at random, held in a [`huge_page_vec`], and copied into one
/// when cloned (a plain `Vec`'s clone would lose the hint: the engine runs on clones of a
/// scenario's nodes and links).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct HugePages<T>(Vec<T>);

impl<T> Default for HugePages<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<T> HugePages<T> {
    /// `values`, copied into memory with the hint.
    pub(crate) fn collect(len: usize, values: impl IntoIterator<Item = T>) -> Self {
        Self(huge_page_collect(len, values))
    }

    /// `values` as they are (already in a [`huge_page_vec`], or small).
    pub(crate) fn from_vec(values: Vec<T>) -> Self {
        Self(values)
    }
}

impl<T: Clone> Clone for HugePages<T> {
    fn clone(&self) -> Self {
        Self::collect(self.0.len(), self.0.iter().cloned())
    }
}

impl<T> std::ops::Deref for HugePages<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T> std::ops::DerefMut for HugePages<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(start: *const u8, bytes: usize) {
    let first = (start as usize).next_multiple_of(HUGE_PAGE);
    let end = (start as usize + bytes) / HUGE_PAGE * HUGE_PAGE;
    if end > first {
        // SAFETY: `madvise(MADV_HUGEPAGE)` only sets a paging policy on whole pages inside this
        // process's own allocation (`first..end` lies within the vector's reserved capacity):
        // it reads and writes no memory of the program, and a failure is harmless (ignored).
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_start: *const u8, _bytes: usize) {}
