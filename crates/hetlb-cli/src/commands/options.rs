//! `hetlb options`: the embedded balancer's options, as the library's one table gives them —
//! the names every face sets (`hetlb run iterative --NAME`, the C options string `NAME=VALUE`,
//! the Python keyword `NAME=`), their values, defaults and meaning.

use crate::output::{Format, print_csv, print_json, table};
use anyhow::Result;
use hetlb_peer::options::OPTIONS;
use serde::Serialize;

/// Arguments of `hetlb options`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    hetlb options\n  \
    hetlb options --format json")]
pub struct Args {
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// One option, as printed.
#[derive(Serialize)]
struct Row {
    name: &'static str,
    values: &'static str,
    default: Option<String>,
    doc: &'static str,
}

/// Runs `hetlb options`.
pub fn run(args: Args) -> Result<()> {
    let rows: Vec<Row> = OPTIONS
        .iter()
        .map(|o| Row {
            name: o.name,
            values: o.values,
            default: o.default_value(),
            doc: o.doc,
        })
        .collect();
    let default_text = |r: &Row| r.default.clone().unwrap_or_else(|| "(see doc)".into());
    match args.format {
        Format::Json => print_json(&rows),
        Format::Csv => print_csv(
            &["name", "values", "default", "doc"],
            rows.iter().map(|r| {
                [
                    r.name.to_string(),
                    r.values.to_string(),
                    r.default.clone().unwrap_or_default(),
                    r.doc.to_string(),
                ]
            }),
        ),
        Format::Table => {
            let mut t = table(["option", "values", "default", "what it does"]);
            t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic)
                .set_width(120);
            for r in &rows {
                t.add_row([
                    r.name.to_string(),
                    r.values.to_string(),
                    default_text(r),
                    r.doc.to_string(),
                ]);
            }
            println!("{t}");
            println!(
                "The options of an embedded balancer (hetlb_peer::options): `--NAME` of `hetlb run \
                 iterative` (with - for _), `NAME=VALUE;...` in C, `NAME=` in Python."
            );
            Ok(())
        }
    }
}
