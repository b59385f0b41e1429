//! Unsigned integer types that can hold a node's load.
//!
//! The planners work on `u64`. The exhaustive enumerations of Rim et al. (Table 1) only
//! ever see loads below 128, and run their inner loops on `u8` lanes so the compiler can
//! vectorise them; [`Units`] lets one rule implementation serve both.

use std::ops::{Add, BitAnd, Shr, Sub};

/// An unsigned integer type used for a count of load units.
///
/// Implemented for `u8`, `u16`, `u32` and `u64`. Callers guarantee that the sum of the two
/// loads of a pair fits in the type (the rules never produce a value above such a sum).
pub trait Units:
    Copy
    + Ord
    + Default
    + Send
    + Sync
    + std::fmt::Debug
    + Add<Output = Self>
    + Sub<Output = Self>
    + BitAnd<Output = Self>
    + Shr<u32, Output = Self>
{
    /// Zero units.
    const ZERO: Self;
    /// One unit.
    const ONE: Self;
    /// The largest representable load.
    const MAX: Self;
    /// Width of the type in bits.
    const BITS: u32 = (std::mem::size_of::<Self>() * 8) as u32;
    /// Widens to `u64`.
    fn to_u64(self) -> u64;
    /// Narrows from `u64`; `value` must fit (it is a share of a sum that fits).
    fn from_u64(value: u64) -> Self;
    /// Converts a boolean to zero or one unit.
    fn from_bool(value: bool) -> Self;

    /// The next narrower type (itself for `u8`): the in-place exchange computes in it when
    /// every pair's sum fits, doubling the lanes of each vector instruction.
    type Narrow: Units;
    /// Narrows; `self` must fit in [`Units::Narrow`].
    fn to_narrow(self) -> Self::Narrow;
    /// Widens from [`Units::Narrow`].
    fn from_narrow(value: Self::Narrow) -> Self;
}

macro_rules! impl_units {
    ($($t:ty => $narrow:ty),*) => {$(
        impl Units for $t {
            type Narrow = $narrow;
            #[inline(always)]
            fn to_narrow(self) -> $narrow {
                debug_assert!(self as u64 <= <$narrow>::MAX as u64);
                self as $narrow
            }
            #[inline(always)]
            fn from_narrow(value: $narrow) -> Self {
                value as $t
            }
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const MAX: Self = <$t>::MAX;
            #[inline(always)]
            fn to_u64(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn from_u64(value: u64) -> Self {
                debug_assert!(value <= <$t>::MAX as u64);
                value as $t
            }
            #[inline(always)]
            fn from_bool(value: bool) -> Self {
                value as $t
            }
        }
    )*};
}

impl_units!(u8 => u8, u16 => u8, u32 => u16, u64 => u32);
