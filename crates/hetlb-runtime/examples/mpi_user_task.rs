//! A user task on MPI: a serialisable input type and a registered function.
//!
//! Every rank builds the same job (SPMD); the master sends the inputs, postcard-encoded, to
//! the workers, which run the registered function on them.
//!
//! ```text
//! cargo build --release -p hetlb-runtime --features mpi --example mpi_user_task
//! mpiexec -n 4 target/release/examples/mpi_user_task
//! ```

use hetlb_core::rules::self_scheduling::Policy;
use hetlb_runtime::{FnJob, RunConfig, TaskError, run_mpi};
use hetlb_transport::mpi::Mpi;
use serde::{Deserialize, Serialize};

/// One task: count the primes in `[start, end)`.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Range {
    start: u64,
    end: u64,
}

/// The registered function: the same code in every process.
fn count_primes(r: &Range) -> Result<u64, TaskError> {
    if r.end < r.start {
        return Err(TaskError::new("empty range"));
    }
    let is_prime = |n: u64| {
        n > 1
            && (2..)
                .take_while(|d| d * d <= n)
                .all(|d| !n.is_multiple_of(d))
    };
    Ok((r.start..r.end).filter(|&n| is_prime(n)).count() as u64)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mpi = Mpi::init()?;
    let inputs: Vec<Range> = (0..200)
        .map(|i| Range {
            start: i * 5_000,
            end: (i + 1) * 5_000,
        })
        .collect();
    let job = FnJob::new(inputs, count_primes);
    match run_mpi(&mpi, &job, &RunConfig::new(Policy::Efp)) {
        Ok(Some(out)) => {
            let total: u64 = out.outputs.iter().sum();
            println!("primes below 1,000,000: {total} (78498 expected)");
            for p in &out.report.processors {
                println!(
                    "rank {} ({}): {} tasks, T_exec {:.3} s",
                    p.processor, p.role, p.tasks, p.t_exec
                );
            }
        }
        Ok(None) => {}
        Err(e) => {
            eprintln!("error: {e}");
            mpi.abort(1);
        }
    }
    Ok(())
}
