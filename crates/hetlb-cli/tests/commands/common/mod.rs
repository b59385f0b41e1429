//! What the end-to-end tests share: running `hetlb` from the repository's root, reading its
//! JSON, checking its one-line errors, and a scratch directory per test.

#![allow(dead_code)] // each test file uses a part

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

/// The repository's root, where `examples/…` and the documentation are.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `hetlb` binary, to be run from the repository's root (so `examples/…` paths work).
pub fn command() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hetlb"));
    c.current_dir(root());
    c
}

/// Runs `hetlb` with `args` from the repository's root.
pub fn hetlb(args: &[&str]) -> Output {
    command().args(args).output().expect("run hetlb")
}

/// What `out` printed; panics with its stderr when the command failed.
pub fn stdout_of(out: &Output, what: &dyn std::fmt::Debug) -> String {
    assert!(
        out.status.success(),
        "{what:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("UTF-8")
}

/// Runs `hetlb` and returns what it printed; panics with its stderr when it fails.
pub fn stdout(args: &[&str]) -> String {
    stdout_of(&hetlb(args), &args)
}

/// The JSON `out` printed; panics with its stderr when the command failed.
pub fn json_of(out: &Output, what: &dyn std::fmt::Debug) -> Value {
    serde_json::from_str(&stdout_of(out, what)).expect("JSON")
}

/// Runs `hetlb` and parses its JSON output; panics with its stderr when it fails.
pub fn json(args: &[&str]) -> Value {
    json_of(&hetlb(args), &args)
}

/// The one line `error: …` of a command that failed, checked: a failure, one line on stderr,
/// no panic.
pub fn error_of(out: &Output, what: &dyn std::fmt::Debug) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{what:?} should fail");
    assert_eq!(stderr.lines().count(), 1, "{what:?}: {stderr:?}");
    assert!(stderr.starts_with("error: "), "{what:?}: {stderr:?}");
    assert!(!stderr.contains("panicked"), "{what:?}: {stderr:?}");
    stderr.trim_end().to_string()
}

/// The one line `error: …` of `hetlb args`, checked as [`error_of`] does.
pub fn error_line(args: &[&str]) -> String {
    error_of(&hetlb(args), &args)
}

/// Checks that `hetlb args` fails with one line `error: …` containing `needle`, and no panic.
pub fn fails_with(args: &[&str], needle: &str) {
    let line = error_line(args);
    assert!(line.contains(needle), "{args:?}: {line:?} lacks {needle:?}");
}

/// A fresh directory for this test process under the system's temporary directory:
/// `hetlb-NAME-PID`.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hetlb-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create a scratch directory");
    dir
}
