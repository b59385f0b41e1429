//! Output formats shared by every command: a human table, JSON, or CSV on stdout.
//!
//! Every write to stdout goes through [`line()`] (the `out!` macro), [`print_json`] or
//! [`print_csv`], none of which panics: a failed write (a full disk) is kept and reported by
//! [`finish`] as one `error:` line and a non-zero exit; a closed pipe ends the program quietly.

use anyhow::{Context, Result, anyhow};
use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use hetlb_core::table::{Block, Text};
use serde::Serialize;
use std::io::Write;
use std::sync::OnceLock;

/// The first failed write to stdout.
static WRITE_ERROR: OnceLock<std::io::Error> = OnceLock::new();

/// Writes one line to stdout; after a failed write, writes nothing more.
pub fn line(args: std::fmt::Arguments<'_>) {
    if WRITE_ERROR.get().is_some() {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        let _ = WRITE_ERROR.set(e);
    }
}

/// `println!` that never panics: see [`line()`].
macro_rules! out {
    () => {
        $crate::output::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::output::line(format_args!($($arg)*))
    };
}
pub(crate) use out;

/// Flushes stdout and reports the first write that failed.
///
/// # Errors
/// `cannot write to stdout: …` (the caller treats a closed pipe as a quiet end).
pub fn finish() -> Result<()> {
    let flushed = std::io::stdout().flush();
    if let Some(e) = WRITE_ERROR.get() {
        return Err(anyhow!("cannot write to stdout: {e}"));
    }
    flushed.context("cannot write to stdout")
}

/// How a command prints its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Human-readable tables.
    #[default]
    Table,
    /// One JSON document.
    Json,
    /// Comma-separated values with a header row.
    Csv,
}

/// A table with the house style and the given header.
pub fn table<I, S>(header: I) -> Table
where
    I: IntoIterator<Item = S>,
    S: Into<comfy_table::Cell>,
{
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header);
    t
}

/// Writes `value` as pretty JSON followed by a newline, buffered (stdout alone would write
/// every line with its own system call).
pub fn print_json<T: Serialize>(value: &T) -> Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    serde_json::to_writer_pretty(&mut out, value).context("cannot write to stdout")?;
    writeln!(out).context("cannot write to stdout")?;
    out.flush().context("cannot write to stdout")
}

/// Writes rows as CSV with `header`.
pub fn print_csv<I, R>(header: &[&str], rows: I) -> Result<()>
where
    I: IntoIterator<Item = R>,
    R: IntoIterator,
    R::Item: AsRef<[u8]>,
{
    let mut w = csv::Writer::from_writer(std::io::stdout().lock());
    w.write_record(header).context("cannot write to stdout")?;
    for row in rows {
        w.write_record(row).context("cannot write to stdout")?;
    }
    w.flush().context("cannot write to stdout")
}

pub use hetlb_core::table::fixed;

/// Prints `text`: each line as it is, each table in the house style.
pub fn print_text(text: &Text) {
    for block in text.blocks() {
        match block {
            Block::Line(l) => line(format_args!("{l}")),
            Block::Table(t) => {
                let mut drawn = table(&t.headers);
                for row in &t.rows {
                    drawn.add_row(row);
                }
                line(format_args!("{drawn}"));
            }
            _ => {}
        }
    }
}

/// Writes `t` as CSV: its header, then its rows.
pub fn print_table_csv(t: &hetlb_core::table::Table) -> Result<()> {
    let header: Vec<&str> = t.headers.iter().map(String::as_str).collect();
    print_csv(&header, &t.rows)
}

/// Prints `report` in `format`: itself as JSON, `csv()` as CSV, or `text()` as tables.
pub fn print_report<T: Serialize>(
    format: Format,
    report: &T,
    csv: impl FnOnce() -> hetlb_core::table::Table,
    text: impl FnOnce() -> Text,
) -> Result<()> {
    match format {
        Format::Json => print_json(report),
        Format::Csv => print_table_csv(&csv()),
        Format::Table => {
            print_text(&text());
            Ok(())
        }
    }
}
