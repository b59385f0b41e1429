//! The documentation's examples run as written: every `hetlb balance` line of the README and
//! of the pages in `docs/` (with the shipped `examples/loads.txt` and `examples/graph.txt`),
//! and the scenario shown in TOML in `docs/simulator.md`.

use super::common;

use common::{command, root, scratch, stdout_of};
use std::path::PathBuf;

#[test]
fn the_readme_balance_examples_and_scenario_run() {
    let mut readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    for p in &pages {
        readme.push('\n');
        readme.push_str(&std::fs::read_to_string(p).unwrap());
    }
    let dir = scratch("readme");
    let examples = root().join("examples").canonicalize().unwrap();
    let mut ran = 0;
    for line in readme.lines().map(str::trim) {
        let Some(rest) = line.strip_prefix("hetlb balance ") else {
            continue;
        };
        let typed = rest.split(" #").next().unwrap();
        let args: Vec<String> = typed
            .split_whitespace()
            .map(|a| a.replace("examples/", &format!("{}/", examples.display())))
            .collect();
        let out = command()
            .arg("balance")
            .args(&args)
            .current_dir(&dir)
            .output()
            .unwrap();
        stdout_of(&out, &format!("hetlb balance {typed}"));
        ran += 1;
    }
    assert!(ran >= 7, "only {ran} examples found");
    let toml = readme
        .split("```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .unwrap();
    let scenario = dir.join("scenario.toml");
    std::fs::write(&scenario, toml).unwrap();
    let out = command().arg("simulate").arg(&scenario).output().unwrap();
    stdout_of(&out, &scenario);
    std::fs::remove_dir_all(&dir).ok();
}
