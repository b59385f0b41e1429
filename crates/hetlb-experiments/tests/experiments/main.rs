//! The reproductions of the papers' tables and the scenario files they ship, one test program:
//! `cargo test -p hetlb-experiments --test experiments [MODULE::]`.

mod reproductions;
mod scenario_files;
