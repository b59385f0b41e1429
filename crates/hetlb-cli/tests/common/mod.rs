//! What the end-to-end tests share: running `hetlb` and checking its one-line errors.

#![allow(dead_code)] // each test file uses a part

use serde_json::Value;
use std::process::{Command, Output};

/// Runs `hetlb` with `args` from the repository's root (so `examples/…` paths work).
pub fn hetlb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hetlb"))
        .args(args)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .expect("run hetlb")
}

/// Runs `hetlb` and parses its JSON output; panics with its stderr when it fails.
pub fn json(args: &[&str]) -> Value {
    let out = hetlb(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// Checks that `hetlb args` fails with one line `error: …` containing `needle`, and no panic.
pub fn fails_with(args: &[&str], needle: &str) {
    let out = hetlb(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} should fail");
    assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr:?}");
    assert!(stderr.starts_with("error: "), "{args:?}: {stderr:?}");
    assert!(
        stderr.contains(needle),
        "{args:?}: {stderr:?} lacks {needle:?}"
    );
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr:?}");
}
