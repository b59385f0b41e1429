//! `hetlb trace check FILE` and `hetlb trace merge PARTS… -o FILE`: traces in the Trace
//! Event format (`hetlb_trace`).

use anyhow::{Result, anyhow};
use std::path::PathBuf;

/// Arguments of `hetlb trace`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, clap::Subcommand)]
enum What {
    /// Check a trace against the Trace Event format (every event's ph, ts, pid, tid and
    /// name; spans nested per thread; flows paired) and print what it holds.
    Check {
        /// The trace.
        file: PathBuf,
    },
    /// Merge per-rank traces (`NAME.rankR.json` of an MPI run) into one, their clocks
    /// aligned; each part is checked (its flows may end in another part), then the whole.
    Merge {
        /// The parts.
        #[arg(required = true)]
        parts: Vec<PathBuf>,
        /// The merged trace.
        #[arg(long, short, value_name = "FILE")]
        output: PathBuf,
        /// The merged trace's event limit.
        #[arg(long, value_name = "N", default_value_t = hetlb_trace::DEFAULT_EVENT_LIMIT,
            value_parser = crate::input::whole::<usize>(16, 1 << 40))]
        trace_events: usize,
    },
}

/// Runs `hetlb trace`.
pub fn run(args: Args) -> Result<()> {
    match args.what {
        What::Check { file } => {
            let text = crate::input::read_text(&file, "FILE", 3)
                .map_err(|e| anyhow!("{}: {e:#}", file.display()))?;
            let s = hetlb_trace::check(&text).map_err(|e| anyhow!("{}: {e}", file.display()))?;
            crate::out!(
                "{}: a trace of {} events: {} processes, {} spans, {} counter samples, {} flows, \
                 {} instants, {} events dropped past the limit",
                file.display(),
                s.events,
                s.processes,
                s.spans,
                s.counters,
                s.flows,
                s.instants,
                s.dropped
            );
            Ok(())
        }
        What::Merge {
            parts,
            output,
            trace_events,
        } => {
            crate::trace_out::check_target(&output, trace_events, 1)
                .map_err(|e| anyhow!("--output: {e:#}"))?;
            let mut texts = Vec::with_capacity(parts.len());
            for p in &parts {
                let t = crate::input::read_text(p, "PARTS", 3)
                    .map_err(|e| anyhow!("{}: {e:#}", p.display()))?;
                hetlb_trace::check_part(&t).map_err(|e| anyhow!("{}: {e}", p.display()))?;
                texts.push(t);
            }
            let merged = hetlb_trace::merge(&texts, trace_events).map_err(|e| anyhow!("{e}"))?;
            crate::trace_out::write(&output, &merged).map_err(|e| anyhow!("--output: {e:#}"))?;
            if let Err(e) = hetlb_trace::check(&merged.to_json_string()) {
                eprintln!("note: the merged trace: {e} (is a part missing?)");
            }
            Ok(())
        }
    }
}
