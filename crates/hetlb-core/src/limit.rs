//! Memory and output limits: sizes that would need more than a limit are refused before
//! anything is allocated or written, with a message that says how much and what raises the
//! limit. Every face (command line, Python, C) counts the same way.
//!
//! ```
//! use hetlb_core::limit::{LimitError, check_memory, human, transfers_within, TRANSFER_BYTES};
//! assert_eq!(human(3 << 30), "3.0 GiB");
//! assert!(check_memory("the run", 1 << 20, 1 << 30, "--max-memory GIB").is_ok());
//! let e = check_memory("the run", 1 << 40, 1 << 30, "--max-memory GIB").unwrap_err();
//! assert_eq!(
//!     e.to_string(),
//!     "the run needs about 1.0 TiB of memory, above the limit of 1.0 GiB (raise it with --max-memory GIB)"
//! );
//! assert!(matches!(e, LimitError::Memory { .. }));
//! assert_eq!(transfers_within(1000, 360), 640 / TRANSFER_BYTES as u64);
//! ```

use thiserror::Error;

/// Bytes a recorded transfer holds (the transfer and its share of the phase's vector): what a
/// plan's transfers are counted at against a memory limit.
pub const TRANSFER_BYTES: u128 = 32;

const MIB: f64 = (1u64 << 20) as f64;
const GIB: f64 = (1u64 << 30) as f64;

/// A size above its limit.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum LimitError {
    /// `what` needs more memory than the limit.
    #[error(
        "{what} needs about {} of memory, above the limit of {} (raise it with {raise})",
        human(*needed),
        human(*limit)
    )]
    Memory {
        /// What needs the memory (`the run`, `enumerating 10 vectors`).
        what: String,
        /// The estimate, in bytes.
        needed: u128,
        /// The limit, in bytes.
        limit: u128,
        /// What raises the limit (`--max-memory GIB`, `max_memory_bytes`).
        raise: &'static str,
    },
    /// `what` would write more than the limit.
    #[error(
        "{what} would write about {}, above the limit of {} (raise it with {raise})",
        human(*needed),
        human(*limit)
    )]
    Output {
        /// What would be written (`the plot`, `the per-round CSV`).
        what: String,
        /// The estimate, in bytes.
        needed: u128,
        /// The limit, in bytes.
        limit: u128,
        /// What raises the limit (`--max-output MIB`).
        raise: &'static str,
    },
}

/// Refuses `needed` bytes of memory for `what` above `limit`.
///
/// # Errors
/// [`LimitError::Memory`], naming `raise` as what raises the limit.
pub fn check_memory(
    what: &str,
    needed: u128,
    limit: u128,
    raise: &'static str,
) -> Result<(), LimitError> {
    if needed > limit {
        return Err(LimitError::Memory {
            what: what.to_string(),
            needed,
            limit,
            raise,
        });
    }
    Ok(())
}

/// Refuses an output of about `needed` bytes for `what` above `limit`.
///
/// # Errors
/// [`LimitError::Output`], naming `raise` as what raises the limit.
pub fn check_output(
    what: &str,
    needed: u128,
    limit: u128,
    raise: &'static str,
) -> Result<(), LimitError> {
    if needed > limit {
        return Err(LimitError::Output {
            what: what.to_string(),
            needed,
            limit,
            raise,
        });
    }
    Ok(())
}

/// How many transfers a plan may record under a memory `limit` once `fixed` bytes are taken
/// by the rest of the run (the loads, the network): what the planners' `max_transfers` is set
/// to.
pub fn transfers_within(limit: u128, fixed: u128) -> u64 {
    u64::try_from(limit.saturating_sub(fixed) / TRANSFER_BYTES).unwrap_or(u64::MAX)
}

/// `gib` gibibytes in bytes (saturating): `--max-memory 8` is `8 << 30`.
pub fn gib_to_bytes(gib: f64) -> u64 {
    (gib * GIB).min(u64::MAX as f64) as u64
}

/// `mib` mebibytes in bytes (saturating).
pub fn mib_to_bytes(mib: f64) -> u64 {
    (mib * MIB).min(u64::MAX as f64) as u64
}

/// A size for a person: `1.5 GiB`, `300 MiB` (rounded up), `2.0 TiB`.
pub fn human(bytes: u128) -> String {
    let b = bytes as f64;
    if b >= GIB * 1024.0 {
        format!("{:.1} TiB", b / GIB / 1024.0)
    } else if b >= GIB {
        format!("{:.1} GiB", b / GIB)
    } else {
        format!("{:.0} MiB", (b / MIB).ceil())
    }
}
