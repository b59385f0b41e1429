//! The CPUs a process may run on, as a bit set that the processes of a node OR together (one
//! `MPI_Allreduce`) to learn how many cores the job has there: a launcher that binds each
//! process to one core leaves every process one CPU, yet the node a core per process.

/// Words of a CPU set: CPUs 0 to 1023, as Linux's default `CPU_SETSIZE`.
pub(super) const WORDS: usize = 17;

/// The last word is a flag: set when some process could not tell its CPUs.
const UNKNOWN: usize = WORDS - 1;

/// The CPUs above this one are not counted (a larger machine is judged by its first 1024).
const MAX_CPU: usize = 64 * UNKNOWN;

/// This process's allowed CPUs (Linux: `Cpus_allowed_list` in `/proc/self/status`); `None`
/// where that cannot be read.
pub(super) fn allowed() -> Option<[u64; WORDS]> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?;
    parse_list(list.trim())
}

/// A set that says "not known": OR-ed with the others, it makes [`count`] answer `None`.
pub(super) fn unknown() -> [u64; WORDS] {
    let mut set = [0; WORDS];
    set[UNKNOWN] = 1;
    set
}

/// How many CPUs `set` holds, or `None` when a process could not tell its own.
pub(super) fn count(set: &[u64; WORDS]) -> Option<usize> {
    if set[UNKNOWN] != 0 {
        return None;
    }
    let n: u32 = set[..UNKNOWN].iter().map(|w| w.count_ones()).sum();
    (n > 0).then_some(n as usize)
}

/// A CPU list as Linux writes it (`0-3,8,10-11`) as a set; `None` when it is not one.
fn parse_list(list: &str) -> Option<[u64; WORDS]> {
    let mut set = [0u64; WORDS];
    for part in list.split(',').filter(|p| !p.is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((lo, hi)) => (lo.parse::<usize>().ok()?, hi.parse::<usize>().ok()?),
            None => {
                let cpu = part.parse::<usize>().ok()?;
                (cpu, cpu)
            }
        };
        if lo > hi {
            return None;
        }
        for cpu in lo..=hi.min(MAX_CPU - 1) {
            set[cpu / 64] |= 1 << (cpu % 64);
        }
    }
    Some(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn union(a: &[u64; WORDS], b: &[u64; WORDS]) -> [u64; WORDS] {
        std::array::from_fn(|i| a[i] | b[i])
    }

    #[test]
    fn lists_as_linux_writes_them() {
        assert_eq!(parse_list("0-1").as_ref().and_then(count), Some(2));
        assert_eq!(parse_list("0-3,8,10-11").as_ref().and_then(count), Some(7));
        assert_eq!(parse_list("5").as_ref().and_then(count), Some(1));
        // beyond the counted CPUs: cut at 1024
        assert_eq!(parse_list("1000-2000").as_ref().and_then(count), Some(24));
        assert_eq!(parse_list("3-1"), None);
        assert_eq!(parse_list("a"), None);
    }

    #[test]
    fn two_processes_bound_to_one_core_each_have_two() {
        let (a, b) = (parse_list("0").unwrap(), parse_list("1").unwrap());
        assert_eq!(count(&union(&a, &b)), Some(2));
        let overlapping = parse_list("0-1").unwrap();
        assert_eq!(count(&union(&a, &overlapping)), Some(2));
    }

    #[test]
    fn one_unknown_process_makes_the_node_unknown() {
        let eight = parse_list("0-7").unwrap();
        assert_eq!(count(&union(&eight, &unknown())), None);
    }

    #[test]
    fn this_process_can_tell_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(allowed().as_ref().and_then(count).is_some());
        }
    }
}
