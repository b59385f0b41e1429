//! `hetlb`: exact load balancing for heterogeneous clusters, from the command line (the
//! program's body is the `hetlb_cli` library, see its `run`).

fn main() -> std::process::ExitCode {
    hetlb_cli::run()
}
