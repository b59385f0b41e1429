//! `hetlb reproduce`.

use anyhow::Result;

/// Arguments of `hetlb reproduce`.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs `hetlb reproduce`.
pub fn run(_args: Args) -> Result<()> {
    anyhow::bail!("not yet available")
}
