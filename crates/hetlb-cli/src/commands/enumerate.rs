//! `hetlb enumerate`.

use anyhow::Result;

/// Arguments of `hetlb enumerate`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `hetlb enumerate`.
pub fn run(_args: Args) -> Result<()> {
    anyhow::bail!("not yet available")
}
