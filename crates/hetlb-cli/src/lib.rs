//! `hetlb`: exact load balancing for heterogeneous clusters, from the command line.
//!
//! Subcommands:
//! * `balance` — balance one load vector and print the plan and its metrics;
//! * `reproduce` — recompute a published table and print it beside the paper's numbers;
//! * `enumerate` — exhaustive histogram of the final max difference over all load vectors;
//! * `bench` — time the hot kernels side by side with their baselines;
//! * `simulate` — run a discrete-event scenario file (TOML);
//! * `run` — real work on real workers (threads or MPI): EFP master-worker, or an iterative
//!   application balanced by peer rebalancing;
//! * `replay` — other rules, offline, on the rebalances a run recorded;
//! * `options` — the embedded balancer's options, one table for every face.
//!
//! Every size is bounded before the work starts: memory by `--max-memory`, what a command
//! writes (per-round JSON or CSV, plots) by `--max-output`.
//!
//! Errors are one line, `error: ...`, naming the option at fault, with a non-zero exit. A
//! failed write to stdout is such an error too; a closed pipe ends the program quietly.
//!
//! The program's body is this library and its one entry point, [`run`]; `src/main.rs` only
//! calls it. A library compiles as soon as the crates it uses have their metadata, beside
//! their code generation, where a program waits for all of them to finish, so the build keeps
//! every core busy to its end (on 2 cores the release build's wall time did not change
//! measurably: it is bound by the total work; docs/benchmarks.md). Nothing here is a stable
//! API: embed `hetlb-peer`, `hetlb-core` or `hetlb-sim` instead.

mod commands;
mod input;
mod limits;
mod output;
mod plot;
mod progress;
mod queues;
mod trace_out;

pub(crate) use output::out;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::process::ExitCode;

/// Exact load balancing for heterogeneous clusters.
#[derive(Debug, Parser)]
#[command(name = "hetlb", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Refuse any size whose estimated memory is above this many GiB, before allocating it
    /// (the matrices of `run matmul`, the tasks of `run synthetic`, `simulate` and `run
    /// scenario`, the vectors of `enumerate`, every `bench` kernel, the nodes and plan of
    /// `balance`). Default: 8, or 80% of what this process may use when that is less (its
    /// address-space limit, its cgroup's memory limit, the machine's memory).
    #[arg(
        long,
        global = true,
        value_name = "GIB",
        value_parser = input::real(0.0, 1e6, true)
    )]
    max_memory: Option<f64>,
    /// Refuse an output (per-round JSON or CSV, a plot) estimated above this many MiB,
    /// before writing it.
    #[arg(
        long,
        global = true,
        value_name = "MIB",
        default_value_t = limits::DEFAULT_OUTPUT_MIB,
        value_parser = input::real(0.0, 1e9, true)
    )]
    max_output: f64,
}

/// The command line, with negative numbers accepted as values everywhere (so that `-1` gets
/// a range error rather than "unexpected argument").
fn command() -> clap::Command {
    fn negatives(cmd: clap::Command) -> clap::Command {
        cmd.mut_args(|a| {
            if a.get_action().takes_values() {
                a.allow_negative_numbers(true)
            } else {
                a
            }
        })
        .mut_subcommands(negatives)
    }
    negatives(Cli::command())
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Balance one load vector on a hypercube or any network and print the plan and its metrics.
    Balance(commands::balance::Args),
    /// Predict, before anything moves, whether balancing pays: each rule's gain per iteration
    /// against the cost of its move, by the paper's routing and by direct routing.
    Advise(commands::advise::Args),
    /// Recompute a published table and print it beside the paper's numbers.
    Reproduce(commands::reproduce::Args),
    /// Histogram of the final max difference over every non-decreasing load vector.
    Enumerate(commands::enumerate::Args),
    /// Time the hot kernels against their baselines, side by side.
    Bench(commands::bench::Args),
    /// Run a discrete-event scenario (TOML) and report makespan, idle times, queue lengths.
    Simulate(commands::simulate::Args),
    /// Run real work on real workers (threads or MPI): EFP master-worker, or an iterative
    /// application balanced by peer rebalancing.
    Run(commands::run::Args),
    /// Replay other rules offline on the rebalances recorded by `hetlb run iterative --dump`.
    Replay(commands::replay::Args),
    /// The embedded balancer's options: names, values, defaults (one table for every face).
    Options(commands::options::Args),
    /// One self-contained HTML page of a trace or of a run's JSON: imbalance, loads, a rank ×
    /// step heat map, migrations, the trigger's decisions.
    Report(commands::report::Args),
    /// Check a trace against the Trace Event format, or merge per-rank traces.
    Trace(commands::trace::Args),
}

/// True when `message` reports that stdout's reader went away (`hetlb … | head`).
fn is_broken_pipe(message: &str) -> bool {
    message.contains("Broken pipe") || message.contains("os error 32")
}

/// A closed stdout ends the program quietly, as it does for other Unix tools, instead of
/// panicking in `println!`.
fn exit_quietly_on_broken_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if payload.starts_with("failed printing to stdout") && is_broken_pipe(payload) {
            std::process::exit(0);
        }
        default(info);
    }));
}

/// Runs the `hetlb` command line on the process's arguments and returns its exit status: 0 on
/// success, 1 for an error (one line, `error: ...`, on stderr), 2 for a command line clap
/// refuses.
pub fn run() -> ExitCode {
    exit_quietly_on_broken_pipe();
    let parsed = command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    ExitCode::from(2)
                } else {
                    ExitCode::SUCCESS
                };
            }
            // clap's message, up to its usage section, on one line.
            let text = e.render().to_string();
            let message: Vec<&str> = text
                .lines()
                .map(str::trim)
                .take_while(|l| !l.is_empty() && !l.starts_with("Usage:"))
                .collect();
            eprintln!("{}", message.join(" "));
            return ExitCode::from(2);
        }
    };
    limits::set_gib(cli.max_memory);
    limits::set_output_mib(cli.max_output);
    let result = match cli.command {
        Command::Balance(args) => commands::balance::run(args),
        Command::Advise(args) => commands::advise::run(args),
        Command::Reproduce(args) => commands::reproduce::run(args),
        Command::Enumerate(args) => commands::enumerate::run(args),
        Command::Bench(args) => commands::bench::run(args),
        Command::Simulate(args) => commands::simulate::run(args),
        Command::Run(args) => commands::run::run(args),
        Command::Replay(args) => commands::replay::run(args),
        Command::Options(args) => commands::options::run(args),
        Command::Report(args) => commands::report::run(args),
        Command::Trace(args) => commands::trace::run(args),
    }
    .and_then(|()| output::finish());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let message = format!("{e:#}").replace('\n', " ");
            if is_broken_pipe(&message) {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::error::ErrorKind;
    use clap::{Command, CommandFactory, Parser};

    /// The words naming every command without subcommands, after the program's name.
    fn leaves(command: &Command, path: &[String], out: &mut Vec<Vec<String>>) {
        let mut subcommands = command.get_subcommands().peekable();
        if subcommands.peek().is_none() {
            out.push(path.to_vec());
        }
        for sub in subcommands {
            let mut longer = path.to_vec();
            longer.push(sub.get_name().to_string());
            leaves(sub, &longer, out);
        }
    }

    /// Every command's arguments are consistent, and every default given as text
    /// (`default_value = "..."`) passes its argument's own parser: clap parses the defaults of
    /// a command line that gives none before it looks for the required arguments.
    #[test]
    fn every_command_and_default_is_valid() {
        let command = super::Cli::command();
        command.clone().debug_assert();
        let mut paths = Vec::new();
        leaves(&command, &["hetlb".to_string()], &mut paths);
        assert!(paths.len() > 20, "{paths:?}");
        for path in paths {
            if let Err(e) = super::Cli::try_parse_from(&path) {
                assert!(
                    !matches!(
                        e.kind(),
                        ErrorKind::ValueValidation | ErrorKind::InvalidValue
                    ),
                    "{path:?}: {e}"
                );
            }
        }
    }
}
