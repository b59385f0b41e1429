//! The memory a command may use: sizes that would need more are refused before anything is
//! allocated, with one line that names the option and the limit (`--max-memory` raises it).

use anyhow::{Result, bail};
use std::sync::atomic::{AtomicU64, Ordering};

/// The default limit, in GiB.
pub const DEFAULT_GIB: f64 = 8.0;

static LIMIT_BYTES: AtomicU64 = AtomicU64::new((DEFAULT_GIB * GIB) as u64);

/// The default limit on what one command writes to stdout or to a plot, in MiB.
pub const DEFAULT_OUTPUT_MIB: f64 = 1024.0;

static OUTPUT_BYTES: AtomicU64 = AtomicU64::new((DEFAULT_OUTPUT_MIB * MIB) as u64);

const MIB: f64 = (1u64 << 20) as f64;

/// Sets the output limit (from `--max-output`).
pub fn set_output_mib(mib: f64) {
    OUTPUT_BYTES.store((mib * MIB).min(u64::MAX as f64) as u64, Ordering::Relaxed);
}

/// Refuses an output of about `bytes` above the output limit, before anything is written,
/// naming `option` (what asked for it) and the option that raises the limit.
pub fn check_output(option: &str, what: &str, bytes: u128) -> Result<()> {
    let limit = OUTPUT_BYTES.load(Ordering::Relaxed);
    if bytes > u128::from(limit) {
        bail!(
            "{option}: {what} would write about {}, above the limit of {} (raise it with \
             --max-output MIB)",
            human(bytes),
            human(u128::from(limit))
        );
    }
    Ok(())
}

const GIB: f64 = (1u64 << 30) as f64;

/// Sets the limit (from `--max-memory`).
pub fn set_gib(gib: f64) {
    LIMIT_BYTES.store((gib * GIB).min(u64::MAX as f64) as u64, Ordering::Relaxed);
}

/// The limit, in bytes.
pub fn bytes() -> u128 {
    u128::from(LIMIT_BYTES.load(Ordering::Relaxed))
}

/// Refuses `bytes` (an estimate of what `what` needs) above the limit, naming `option`.
pub fn check(option: &str, what: &str, bytes: u128) -> Result<()> {
    let limit = LIMIT_BYTES.load(Ordering::Relaxed);
    if bytes > u128::from(limit) {
        bail!(
            "{option}: {what} needs about {} of memory, above the limit of {} (raise it with \
             --max-memory GIB)",
            human(bytes),
            human(u128::from(limit))
        );
    }
    Ok(())
}

/// A scenario's error as one line naming the file; a memory refusal also names the option
/// that raises the limit.
pub fn scenario_error(path: &std::path::Path, e: hetlb_sim::ScenarioError) -> anyhow::Error {
    let raise = if e.message.contains("of memory, above the limit") {
        " (raise it with --max-memory GIB)"
    } else {
        ""
    };
    anyhow::anyhow!("{}: {e}{raise}", path.display())
}

/// Bytes a recorded transfer holds (the transfer and its share of the phase's vector).
pub const TRANSFER_BYTES: u128 = 32;

/// How many transfers a plan may record once `fixed` bytes are taken by the rest of the
/// command: the memory left under the limit, in transfers.
pub fn transfers_within(fixed: u128) -> u64 {
    u64::try_from(bytes().saturating_sub(fixed) / TRANSFER_BYTES).unwrap_or(u64::MAX)
}

/// A planner's error as one line: a plan that outgrew the memory names `--max-memory` (and
/// the round limit that bounds it); anything else is `option: context: error`.
pub fn round_error(
    e: hetlb_core::algorithm::BalanceError,
    context: &str,
    option: &str,
) -> anyhow::Error {
    use hetlb_core::algorithm::BalanceError;
    use hetlb_core::rounds::RoundError;
    match e {
        BalanceError::Round(RoundError::TooManyTransfers { limit, round }) => anyhow::anyhow!(
            "--max-memory: {context}: the plan passed {limit} transfers (about {}) in round \
             {round}, above the limit of {} (raise it with --max-memory GIB, or bound the run \
             with --max-rounds)",
            human(u128::from(limit) * TRANSFER_BYTES),
            human(bytes())
        ),
        other => anyhow::anyhow!("{option}: {context}: {other}"),
    }
}

/// `1.5 GiB`, `300 MiB`, …
pub fn human(bytes: u128) -> String {
    let b = bytes as f64;
    if b >= GIB * 1024.0 {
        format!("{:.1} TiB", b / GIB / 1024.0)
    } else if b >= GIB {
        format!("{:.1} GiB", b / GIB)
    } else {
        format!("{:.0} MiB", (b / (1u64 << 20) as f64).ceil())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_above_the_limit_and_names_the_option() {
        assert!(check("--size", "the run", 1 << 20).is_ok());
        let e = check("--size", "the run", 1 << 40).unwrap_err().to_string();
        assert!(e.starts_with("--size: the run needs about 1.0 TiB"), "{e}");
        assert!(e.contains("--max-memory"));
    }
}
