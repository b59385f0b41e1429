//! Real-worker scenario runs stay bounded whatever the time scale: a scale at which diffusion
//! rounds would come microseconds apart is refused before anything starts, and a run whose
//! ranks cannot keep up with their rounds stops with an error instead of growing without end.

use hetlb_runtime::scenario::{
    Calibration, MIN_ROUND_SECONDS, RealConfig, Work, check, run_threads,
};
use hetlb_sim::Scenario;
use std::time::Duration;

fn dishet(interval: f64) -> Scenario {
    Scenario::from_toml(&format!(
        "topology = \"ring:8\"\n[nodes]\ncount = 8\nrate = 2.0\n\
         initial_loads = [400, 0, 0, 0, 0, 0, 0, 0]\n\
         [links]\nrate = 50.0\ndelay = 0.1\n\
         [policy]\nkind = \"diffusion\"\nalgorithm = \"dishet\"\ninterval = {interval}\n"
    ))
    .unwrap()
}

#[test]
fn a_time_scale_too_small_for_the_rounds_is_refused_with_the_smallest_that_works() {
    let s = dishet(0.5);
    let e = check(&s, 64, 1e-5, 200.0).unwrap_err().to_string();
    assert!(
        e.contains("policy.interval") && e.contains("time-scale"),
        "{e}"
    );
    let smallest = MIN_ROUND_SECONDS / 0.5;
    assert!(check(&s, 64, smallest, 200.0).is_ok());
    assert!(check(&s, 64, smallest * 0.99, 200.0).is_err());
}

#[test]
fn ranks_that_cannot_keep_up_stop_instead_of_growing() {
    // Rounds every 0.5 µs of real time: no machine keeps up; the run must end, and end with
    // an error or with every task done.
    let cfg = RealConfig::new(1e-6, Work::Sleep).timeout(Duration::from_secs(60));
    match run_threads(
        &dishet(0.5),
        &cfg,
        Calibration {
            rounds_per_second: 1e9,
        },
    ) {
        Ok(r) => assert_eq!(r.tasks_completed, 400),
        Err(e) => assert!(e.to_string().contains("behind its schedule"), "{e}"),
    }
}
