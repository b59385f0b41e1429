//! `hetlb report RUN -o report.html`: one self-contained HTML page of a trace or of a run's
//! JSON (`hetlb_trace::report`).

use anyhow::{Context, Result, anyhow};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `hetlb report`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    hetlb run iterative --algorithm cwa --procs 8 --trace run.json && hetlb report run.json -o report.html\n  \
    hetlb simulate examples/scenarios/mirtaheri-compensated.toml --trace sim.json && hetlb report sim.json -o sim.html\n  \
    hetlb run iterative --algorithm all --format json > run-all.json && hetlb report run-all.json -o all.html\n  \
    hetlb run scenario examples/scenarios/mirtaheri-compensated.toml --compare --format json > s.json && hetlb report s.json -o s.html")]
pub struct Args {
    /// A trace (`--trace FILE` of any command), or the JSON of `hetlb run iterative --format
    /// json` or `hetlb run scenario --compare --format json`.
    run: PathBuf,
    /// The HTML file to write (one file: its script, styles and data inline, nothing fetched
    /// when it is opened).
    #[arg(long, short, value_name = "FILE.html")]
    output: PathBuf,
}

/// Runs `hetlb report`.
pub fn run(args: Args) -> Result<()> {
    // The text, then the parsed document and the model: about four times the file.
    let text = crate::input::read_text(&args.run, "RUN", 4)
        .map_err(|e| anyhow!("{}: {e:#}", args.run.display()))?;
    let name = args.run.file_name().map_or_else(
        || args.run.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let page = hetlb_trace::report::html(&text, &name)
        .map_err(|e| anyhow!("{}: {e}", args.run.display()))?;
    crate::limits::check_output("--output", "the report", page.len() as u128)?;
    write_whole(&args.output, page.as_bytes())
        .with_context(|| format!("--output: {}", args.output.display()))
}

/// Writes `bytes` to a temporary file beside `path`, then renames it: `path` is either the
/// whole page or untouched.
fn write_whole(path: &Path, bytes: &[u8]) -> Result<()> {
    if path.is_dir() {
        anyhow::bail!("it is a directory");
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .map_or_else(|| "report".into(), |n| n.to_string_lossy().into_owned());
    let temp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let written = std::fs::File::create(&temp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    if let Err(e) = written.and_then(|()| std::fs::rename(&temp, path)) {
        let _ = std::fs::remove_file(&temp);
        return Err(e.into());
    }
    Ok(())
}
