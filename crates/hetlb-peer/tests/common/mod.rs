//! What the MPI test programs share: starting themselves under `mpiexec`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `mpiexec -n ranks <this program>` (or the launcher `HETLB_MPIEXEC` names) with the
/// environment variable `key` set to `mode`, killing it after `limit`; returns whether it
/// succeeded and what it wrote on stderr.
///
/// # Errors
/// When mpiexec cannot start, or runs past `limit`.
pub fn mpiexec(
    ranks: usize,
    key: &str,
    mode: &str,
    limit: Duration,
) -> Result<(bool, String), String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    // The launcher: HETLB_MPIEXEC (a command and its arguments, e.g. `mpiexec.openmpi
    // --oversubscribe`), or mpiexec.
    let launcher = std::env::var("HETLB_MPIEXEC").unwrap_or_else(|_| "mpiexec".into());
    let mut words = launcher.split_whitespace();
    let program = words.next().unwrap_or("mpiexec");
    let mut child = Command::new(program)
        .args(words)
        .args(["-n", &ranks.to_string()])
        .arg(&me)
        .env(key, mode)
        .stdout(Stdio::inherit())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {program} (is MPI installed?): {e}"))?;
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            let mut err = String::new();
            if let Some(mut s) = child.stderr.take() {
                use std::io::Read;
                let _ = s.read_to_string(&mut err);
            }
            return Ok((status.success(), err));
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "mpiexec -n {ranks} ({mode}) still running after {limit:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
