//! The Mirtaheri scenarios the library compiles in are the files users run from
//! `examples/` (`hetlb simulate examples/scenarios/mirtaheri-delayed.toml`): the two copies
//! must not drift apart. Outside a checkout of the workspace (a packaged crate) there is no
//! `examples/` to compare with.

use hetlb_experiments::mirtaheri::SCENARIOS;
use std::path::PathBuf;

#[test]
fn the_compiled_scenarios_are_the_shipped_examples() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    if !root.is_dir() {
        return;
    }
    for (name, text) in SCENARIOS {
        let dir = if name == "mirtaheri-neighbourhood" {
            "simulator"
        } else {
            "scenarios"
        };
        let path = root.join(dir).join(format!("{name}.toml"));
        let shipped =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            shipped,
            text,
            "{} differs from the crate's copy",
            path.display()
        );
    }
}

#[test]
fn every_compiled_scenario_parses() {
    for (name, _) in SCENARIOS {
        hetlb_experiments::mirtaheri::scenario(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}
