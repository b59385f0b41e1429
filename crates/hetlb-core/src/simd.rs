//! Run-time choice of the x86-64 instruction set for the vectorised loops.
//!
//! The `multiversioned!` macro compiles a function once per
//! [`Level`] (AVX-512, AVX2, SSE4.2, each with `#[target_feature]`) and once more for the
//! baseline, and calls the best one [`level`] allows on this processor. Elsewhere than x86-64
//! the function is compiled once.
//!
//! This does by `macro_rules!` what the `multiversion` crate does by a procedural macro: the
//! crate every other hetlb crate waits for then compiles without `syn` 2 and the macro crates
//! before it (about 5 s of a 2-core build of the README's first command).

use std::sync::atomic::{AtomicU8, Ordering};

/// An instruction-set level a `multiversioned!` function is compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    /// No feature beyond x86-64's (or another architecture).
    Baseline = 1,
    /// SSE4.2 and POPCNT.
    Sse42 = 2,
    /// AVX2, FMA, BMI1, BMI2, LZCNT and POPCNT (x86-64-v3).
    Avx2 = 3,
    /// AVX-512 F, BW, VL and DQ on top of [`Level::Avx2`].
    Avx512 = 4,
}

impl Level {
    /// The level's name as [`crate::exchange::simd_target`] reports it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Level::Baseline => "baseline",
            Level::Sse42 => "sse4.2",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }
}

/// The level found on this processor, 0 before the first call.
static DETECTED: AtomicU8 = AtomicU8::new(0);

/// The highest [`Level`] this processor runs, detected on the first call (every feature of the
/// level checked) and remembered.
///
/// # Complexity
/// One atomic load after the first call.
#[inline]
pub(crate) fn level() -> Level {
    match DETECTED.load(Ordering::Relaxed) {
        4 => Level::Avx512,
        3 => Level::Avx2,
        2 => Level::Sse42,
        1 => Level::Baseline,
        _ => {
            let found = detect();
            DETECTED.store(found as u8, Ordering::Relaxed);
            found
        }
    }
}

/// Asks the processor (and the operating system, for the wide registers' state).
fn detect() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        let v3 = has!("avx2")
            && has!("fma")
            && has!("bmi1")
            && has!("bmi2")
            && has!("lzcnt")
            && has!("popcnt");
        if v3 && has!("avx512f") && has!("avx512bw") && has!("avx512vl") && has!("avx512dq") {
            return Level::Avx512;
        }
        if v3 {
            return Level::Avx2;
        }
        if has!("sse4.2") && has!("popcnt") {
            return Level::Sse42;
        }
    }
    Level::Baseline
}

/// Compiles a function for each x86-64 [`Level`] the hot loops are dispatched to at run time
/// (AVX-512, AVX2, SSE4.2, and the baseline) and calls the one [`level`] chooses; one list of
/// targets for every such loop. Elsewhere than x86-64 the function is compiled once.
///
/// The function's generic parameters take one bound each (`<T: Units, C: Units>`) and its
/// parameters are plain names; `impl Trait` parameters are fine.
macro_rules! multiversioned {
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident $(<$($generic:ident : $bound:path),+ $(,)?>)?
            ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)?
        $body:block
    ) => {
        $(#[$meta])*
        $vis fn $name $(<$($generic: $bound),+>)? ($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
                fn avx512 $(<$($generic: $bound),+>)? ($($arg: $ty),*) $(-> $ret)? $body

                #[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
                fn avx2 $(<$($generic: $bound),+>)? ($($arg: $ty),*) $(-> $ret)? $body

                #[target_feature(enable = "sse4.2,popcnt")]
                fn sse42 $(<$($generic: $bound),+>)? ($($arg: $ty),*) $(-> $ret)? $body

                // SAFETY: each version is called only when `level()` found every feature it
                // is compiled with on this processor. (Safe `#[target_feature]` functions need
                // Rust 1.86, the AVX-512 features 1.89: the crates' `rust-version`.)
                #[allow(unsafe_code)]
                match $crate::simd::level() {
                    $crate::simd::Level::Avx512 => return unsafe { avx512($($arg),*) },
                    $crate::simd::Level::Avx2 => return unsafe { avx2($($arg),*) },
                    $crate::simd::Level::Sse42 => return unsafe { sse42($($arg),*) },
                    $crate::simd::Level::Baseline => {}
                }
            }
            $body
        }
    };
}
