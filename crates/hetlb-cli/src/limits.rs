//! The memory a command may use and what it may write, from `--max-memory` and
//! `--max-output`: sizes above them are refused before anything is allocated or written, with
//! one line that names the option and the flag that raises the limit. The arithmetic and the
//! messages are the library's ([`hetlb_core::limit`]).

use anyhow::Result;
use hetlb_core::limit;
use std::sync::atomic::{AtomicU64, Ordering};

use hetlb_core::limit::{TRANSFER_BYTES, human};

/// The default limit on what one command writes to stdout or to a plot, in MiB.
pub const DEFAULT_OUTPUT_MIB: f64 = 1024.0;

static LIMIT_BYTES: AtomicU64 = AtomicU64::new(limit::DEFAULT_MEMORY_BYTES);
static OUTPUT_BYTES: AtomicU64 = AtomicU64::new(1024 << 20);

/// Sets the output limit (from `--max-output`).
pub fn set_output_mib(mib: f64) {
    OUTPUT_BYTES.store(limit::mib_to_bytes(mib), Ordering::Relaxed);
}

/// Sets the limit: `--max-memory` when given, else the default of this process (the smallest
/// of 8 GiB and 80% of its address-space limit, its cgroup's memory limit and the machine's
/// memory).
pub fn set_gib(gib: Option<f64>) {
    let bytes = gib.map_or_else(limit::default_memory_limit, limit::gib_to_bytes);
    LIMIT_BYTES.store(bytes, Ordering::Relaxed);
}

/// The limit, in bytes.
pub fn bytes() -> u128 {
    u128::from(LIMIT_BYTES.load(Ordering::Relaxed))
}

/// Refuses an output of about `bytes` above the output limit, before anything is written,
/// naming `option` (what asked for it) and the option that raises the limit.
pub fn check_output(option: &str, what: &str, bytes: u128) -> Result<()> {
    let max = u128::from(OUTPUT_BYTES.load(Ordering::Relaxed));
    limit::check_output(what, bytes, max, "--max-output MIB")
        .map_err(|e| anyhow::anyhow!("{option}: {e}"))
}

/// Refuses `bytes` (an estimate of what `what` needs) above the limit, naming `option`.
pub fn check(option: &str, what: &str, bytes: u128) -> Result<()> {
    limit::check_memory(what, bytes, self::bytes(), "--max-memory GIB")
        .map_err(|e| anyhow::anyhow!("{option}: {e}"))
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

/// How many transfers a plan may record once `fixed` bytes are taken by the rest of the
/// command: the memory left under the limit, in transfers.
pub fn transfers_within(fixed: u128) -> u64 {
    limit::transfers_within(bytes(), fixed)
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
