//! Output formats shared by every command: a human table, JSON, or CSV on stdout.

use anyhow::Result;
use comfy_table::{ContentArrangement, Table, presets::UTF8_FULL_CONDENSED};
use serde::Serialize;
use std::io::Write;

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
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}

/// Writes rows as CSV with `header`.
pub fn print_csv<I, R>(header: &[&str], rows: I) -> Result<()>
where
    I: IntoIterator<Item = R>,
    R: IntoIterator,
    R::Item: AsRef<[u8]>,
{
    let mut w = csv::Writer::from_writer(std::io::stdout().lock());
    w.write_record(header)?;
    for row in rows {
        w.write_record(row)?;
    }
    w.flush()?;
    Ok(())
}

/// Formats a float with `digits` decimals, trimming nothing (tables align better).
pub fn fixed(x: f64, digits: usize) -> String {
    format!("{x:.digits$}")
}
