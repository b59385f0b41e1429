//! `hetlb bench`.

use anyhow::Result;

/// Arguments of `hetlb bench`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `hetlb bench`.
pub fn run(_args: Args) -> Result<()> {
    anyhow::bail!("not yet available")
}
