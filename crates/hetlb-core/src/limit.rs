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
//!
//! The default memory limit follows what the process may really use
//! ([`default_memory_limit`]): the smallest of 8 GiB, its address-space limit, its cgroup's
//! memory limit and the machine's memory, each with some headroom, so that a smaller machine
//! or a tighter `ulimit -v` gets a clean refusal rather than an abort.

use std::path::{Path, PathBuf};
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

/// The default memory limit where nothing smaller applies: 8 GiB.
pub const DEFAULT_MEMORY_BYTES: u64 = 8 << 30;

/// The share, in percent, of what the process may use that the default limit takes: the rest
/// is headroom for what the estimates leave out (the program, the allocator, thread stacks).
pub const HEADROOM_PERCENT: u64 = 80;

/// What this process may use, as far as it can tell: each source that was found and sets a
/// limit, in bytes (`None`: absent, unreadable or unlimited).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct MemorySources {
    /// The address-space limit (`ulimit -v`, `getrlimit(RLIMIT_AS)`).
    pub address_space: Option<u64>,
    /// The memory limit of the process's cgroup (v2 `memory.max`, v1
    /// `memory.limit_in_bytes`), the smallest along its path.
    pub cgroup: Option<u64>,
    /// The machine's memory (`MemTotal` of `/proc/meminfo`).
    pub machine: Option<u64>,
}

impl MemorySources {
    /// The sources of this process (on systems without them, none: the default stays
    /// [`DEFAULT_MEMORY_BYTES`]).
    pub fn here() -> Self {
        let cgroup_of = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        Self {
            address_space: address_space_limit(),
            cgroup: cgroup_files(&cgroup_of)
                .iter()
                .filter_map(|f| std::fs::read_to_string(f).ok())
                .filter_map(|text| parse_cgroup_limit(&text))
                .min(),
            machine: std::fs::read_to_string("/proc/meminfo")
                .ok()
                .and_then(|text| parse_mem_total(&text)),
        }
    }

    /// The default limit these sources give: the smallest of [`DEFAULT_MEMORY_BYTES`] and
    /// [`HEADROOM_PERCENT`] of each source.
    ///
    /// # Example
    /// ```
    /// use hetlb_core::limit::{DEFAULT_MEMORY_BYTES, MemorySources};
    /// let mut s = MemorySources::default();
    /// assert_eq!(s.default_limit(), DEFAULT_MEMORY_BYTES);
    /// s.address_space = Some(2 << 30); // ulimit -v 2097152
    /// s.machine = Some(64 << 30);
    /// assert_eq!(s.default_limit(), (2u64 << 30) / 100 * 80);
    /// ```
    pub fn default_limit(&self) -> u64 {
        [self.address_space, self.cgroup, self.machine]
            .into_iter()
            .flatten()
            .map(|bytes| bytes / 100 * HEADROOM_PERCENT)
            .fold(DEFAULT_MEMORY_BYTES, u64::min)
    }
}

/// The default memory limit of this process: the smallest of 8 GiB and 80% of its
/// address-space limit, of its cgroup's memory limit and of the machine's memory
/// ([`MemorySources::here`]); 8 GiB where none of them can be read.
pub fn default_memory_limit() -> u64 {
    MemorySources::here().default_limit()
}

/// `getrlimit(RLIMIT_AS)`: the soft limit, `None` when unlimited.
#[cfg(unix)]
#[allow(unsafe_code)]
#[allow(clippy::useless_conversion)] // `rlim_t` is `u64` on Linux, not on every system
fn address_space_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the limit into the struct it is given, which lives here.
    let status = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) };
    (status == 0 && limit.rlim_cur != libc::RLIM_INFINITY)
        .then(|| u64::try_from(limit.rlim_cur).unwrap_or(u64::MAX))
}

#[cfg(not(unix))]
fn address_space_limit() -> Option<u64> {
    None
}

/// The cgroup files that may hold this process's memory limit, given `/proc/self/cgroup`:
/// for its cgroup and each of its ancestors, v2 `memory.max` and v1
/// `memory.limit_in_bytes`, and the root files of both.
///
/// # Example
/// ```
/// use hetlb_core::limit::cgroup_files;
/// let files = cgroup_files("0::/user.slice/job\n");
/// assert_eq!(files[0].to_str(), Some("/sys/fs/cgroup/user.slice/job/memory.max"));
/// assert!(files.iter().any(|f| f.to_str() == Some("/sys/fs/cgroup/memory.max")));
/// let v1 = cgroup_files("4:memory:/docker/abc\n1:cpu:/\n");
/// assert_eq!(v1[0].to_str(), Some("/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes"));
/// ```
pub fn cgroup_files(proc_self_cgroup: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut add = |root: &str, path: &str, file: &str| {
        let mut dir = Path::new(path.trim_start_matches('/'));
        loop {
            files.push(Path::new(root).join(dir).join(file));
            match dir.parent() {
                Some(up) => dir = up,
                None => break,
            }
        }
    };
    for line in proc_self_cgroup.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if controllers.is_empty() {
            add("/sys/fs/cgroup", path, "memory.max");
        } else if controllers.split(',').any(|c| c == "memory") {
            add("/sys/fs/cgroup/memory", path, "memory.limit_in_bytes");
        }
    }
    for root in [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ] {
        let root = PathBuf::from(root);
        if !files.contains(&root) {
            files.push(root);
        }
    }
    files
}

/// A cgroup memory limit file's value in bytes: `None` for `max` (v2) or a value no memory
/// reaches (v1 writes about 2^63 for none), or anything unreadable.
///
/// # Example
/// ```
/// use hetlb_core::limit::parse_cgroup_limit;
/// assert_eq!(parse_cgroup_limit("4294967296\n"), Some(4 << 30));
/// assert_eq!(parse_cgroup_limit("max\n"), None);
/// assert_eq!(parse_cgroup_limit("9223372036854771712\n"), None);
/// ```
pub fn parse_cgroup_limit(text: &str) -> Option<u64> {
    text.trim().parse::<u64>().ok().filter(|&b| b < 1 << 62)
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
///
/// # Example
/// ```
/// use hetlb_core::limit::parse_mem_total;
/// let text = "MemTotal:       24684084 kB\nMemFree:  100 kB\n";
/// assert_eq!(parse_mem_total(text), Some(24684084 * 1024));
/// assert_eq!(parse_mem_total("MemFree: 1 kB\n"), None);
/// ```
pub fn parse_mem_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line["MemTotal:".len()..].split_whitespace();
    let value: u64 = words.next()?.parse().ok()?;
    let unit = match words.next() {
        Some("kB") => 1024,
        None => 1,
        Some(_) => return None,
    };
    value.checked_mul(unit)
}
