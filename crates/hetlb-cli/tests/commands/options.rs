//! `hetlb options` prints the library's one table of balancer options, and the documentation's
//! tables of options agree with it.

use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn options_json() -> Vec<serde_json::Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_hetlb"))
        .args(["options", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<serde_json::Value>>(&out.stdout).unwrap()
}

#[test]
fn options_lists_every_option_with_its_default() {
    let rows = options_json();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    for name in [
        "topology",
        "speeds",
        "timeout",
        "entry_timeout",
        "trigger",
        "move_cost",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    let timeout = rows.iter().find(|r| r["name"] == "timeout").unwrap();
    assert_eq!(timeout["default"], "10");
    let table = Command::new(env!("CARGO_BIN_EXE_hetlb"))
        .arg("options")
        .output()
        .unwrap();
    assert!(table.status.success());
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(
        text.contains("check_budget") && text.contains("0.01"),
        "{text}"
    );
}

#[test]
fn the_c_guide_lists_every_option_with_the_library_default() {
    let guide = std::fs::read_to_string(root().join("docs/c-api.md")).unwrap();
    for row in options_json() {
        let name = row["name"].as_str().unwrap();
        let line = guide
            .lines()
            .find(|l| l.starts_with(&format!("| `{name}` |")))
            .unwrap_or_else(|| panic!("docs/c-api.md has no row for {name}"));
        if let Some(default) = row["default"].as_str() {
            assert!(
                line.ends_with(&format!("| `{default}` |")),
                "docs/c-api.md says {line}; the library's default of {name} is {default}"
            );
        }
    }
}
