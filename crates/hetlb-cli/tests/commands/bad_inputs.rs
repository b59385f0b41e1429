//! The lists people type on the command line, as they go wrong: loads, capacities and
//! comma-separated numbers built from digits, separators, signs and extreme numbers. `hetlb`
//! runs on each and either succeeds or fails with one line `error: …` and a non-zero exit,
//! within a time limit: never a panic, an abort or a hang.

use proptest::prelude::*;
use proptest::sample::select;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The longest one run may take.
const LIMIT: Duration = Duration::from_secs(20);

const PIECES: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "7",
    "9",
    ",",
    ",",
    ", ",
    " ",
    ",,",
    "-",
    "-1",
    "+",
    ".",
    "e",
    "-0.0",
    "0.5",
    "2.5e3",
    "1e308",
    "1e-308",
    "nan",
    "inf",
    "-inf",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "4294967296",
    "99999999999999999999999999",
    "x",
    "é",
    "\t",
    "@",
];

/// A list: a few pieces, never starting with `@` (which names a file).
fn list() -> impl Strategy<Value = String> {
    prop::collection::vec(select(PIECES), 0..16).prop_map(|pieces| {
        let s = pieces.concat();
        if s.starts_with('@') {
            format!("0{s}")
        } else {
            s
        }
    })
}

/// Runs `hetlb args`; its exit code and stderr, or a failure after [`LIMIT`].
fn run(args: &[String]) -> Result<(i32, String), TestCaseError> {
    let dir = std::env::temp_dir();
    let mut child = Command::new(env!("CARGO_BIN_EXE_hetlb"))
        .args(args)
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| TestCaseError::fail(format!("cannot start hetlb: {e}")))?;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| TestCaseError::fail(e.to_string()))?
        {
            break status;
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            return Err(TestCaseError::fail(format!("{args:?} took over {LIMIT:?}")));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        use std::io::Read;
        let _ = pipe.read_to_string(&mut stderr);
    }
    let code = status
        .code()
        .ok_or_else(|| TestCaseError::fail(format!("{args:?} ended by a signal: {stderr}")))?;
    Ok((code, stderr))
}

/// Success, or a usage or run error on one line; never a panic.
fn check(args: &[String]) -> Result<(), TestCaseError> {
    let (code, stderr) = run(args)?;
    prop_assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    prop_assert!(matches!(code, 0..=2), "{args:?}: exit {code}: {stderr}");
    if code != 0 {
        prop_assert_eq!(stderr.lines().count(), 1, "{:?}: {}", args, stderr);
        prop_assert!(stderr.starts_with("error"), "{args:?}: {stderr}");
    }
    Ok(())
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn loads(loads in list()) {
        check(&args(&["balance", "-a", "dem", &format!("--loads={loads}")]))?;
    }

    #[test]
    fn capacities(capacities in list()) {
        check(&args(&[
            "balance",
            "-a",
            "dem-hetero",
            "--loads=4,7,0,9",
            &format!("--capacities={capacities}"),
        ]))?;
    }

    #[test]
    fn numbers_of_a_comma_separated_option(sweep in list()) {
        // `--sizes 0` is refused after the lists are read: nothing runs.
        check(&args(&["reproduce", "efp", "--no-plots", "--sizes=0", &format!("--sweep={sweep}")]))?;
    }
}
