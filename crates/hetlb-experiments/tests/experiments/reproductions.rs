//! Each reproduction as a library call: what its result must satisfy on any machine, whatever
//! the published numbers say.

use hetlb_core::Algorithm;
use hetlb_experiments::chau::{ChauTable, compare};
use hetlb_experiments::chau_hetero::ChauHetero;
use hetlb_experiments::dishet::response::{Policy, Response};
use hetlb_experiments::dishet::{Config, DishetError, Distribution};
use hetlb_experiments::efp::{Efp, EfpError};
use hetlb_experiments::mirtaheri::{Measure, Mirtaheri, MirtaheriError, SWEEP_POLICIES};
use hetlb_experiments::monte_carlo::MonteCarloRow;
use hetlb_experiments::overhead::{Overhead, mean_oem_over_cwa, oem_over_cwa};
use hetlb_experiments::paper::mirtaheri::TASKS;
use hetlb_experiments::rim_table1::{RimTable1Error, column};
use hetlb_experiments::{Histogram, paper};

fn on_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

#[test]
fn the_papers_own_rows_are_no_distance_from_the_paper() {
    for which in [ChauTable::One, ChauTable::Two] {
        for p in which.paper() {
            let histogram = Histogram::from_dense(&p.counts);
            let row = compare(which, MonteCarloRow::new(which.algorithm(), p.n, histogram));
            assert_eq!(row.max_abs_z, Some(0.0), "n = {}", p.n);
        }
    }
}

#[test]
fn rim_columns_outside_the_table_are_refused_and_bounds_hold() {
    assert_eq!(
        column(Algorithm::Dem, 12, &|_| {}),
        Err(RimTable1Error::Size(12))
    );
    let dem = column(Algorithm::Dem, 8, &|_| {}).unwrap();
    assert_eq!(dem.bound, Some(3));
    assert_eq!(dem.bound_holds(), Some(true));
    assert_eq!(dem.vectors, dem.histogram.total());
    assert!(dem.published().is_some() && dem.paper.is_some());
    let fixed = column(Algorithm::DemFixed, 8, &|_| {}).unwrap();
    assert!(fixed.paper.is_none() && fixed.matches_paper.is_none());
}

#[test]
fn the_oem_cwa_mean_is_the_mean_of_the_ratios() {
    let imbalances = vec![20, 60];
    let rows = Overhead::new(8)
        .imbalances(imbalances.clone())
        .factors(vec![30, 100])
        .repetitions(3)
        .run(&|_| {})
        .unwrap();
    let ratios: Vec<f64> = imbalances
        .iter()
        .map(|&i| oem_over_cwa(&rows, 8, i).unwrap())
        .collect();
    let mean = mean_oem_over_cwa(&rows, 8, &imbalances).unwrap();
    assert!((mean - (ratios[0] + ratios[1]) / 2.0).abs() < 1e-12);
    assert_eq!(mean_oem_over_cwa(&rows, 16, &imbalances), None);
}

#[test]
fn chau_hetero_counts_every_trial_and_refuses_bad_scales() {
    let report = ChauHetero::new()
        .dims(2..=3)
        .trials(30)
        .scales(vec![100, 1000])
        .scale_trials(4)
        .run(&|_| {})
        .unwrap();
    assert_eq!(report.total_trials(), 60);
    assert!(report.within_claim() <= 60 && report.equal_within_claim() <= 60);
    assert_eq!(report.pass_rates.len(), 2 * 2 * 2);
    assert!(report.worst().is_some_and(|w| w.worst.excess >= 0.0));
    assert!(
        ChauHetero::new()
            .scales(vec![(1 << 40) + 1])
            .run(&|_| {})
            .is_err()
    );
}

#[test]
fn mirtaheri_compensation_never_loses_to_k1_and_the_search_is_a_bound() {
    let report = Mirtaheri::new()
        .runs(2)
        .ratios(vec![0.1, 0.5, 1.0, 4.0])
        .run(&|| {})
        .unwrap();
    // Fig. 8, no balancing, deterministic execution: the finish time the paper states.
    assert!((report.deterministic("fig8", Measure::Makespan) - 2.6).abs() < 1e-9);
    assert_eq!(report.scenarios.len(), 3 + 3 + 3 + 4 + 4);
    assert_eq!(report.sweep.len(), 4 * SWEEP_POLICIES.len());
    for ratio in [0.1, 0.5, 1.0, 4.0] {
        let at = report.sweep_at(ratio).unwrap();
        assert!(at.eq25.makespan <= at.k1.makespan + 1e-9, "ratio {ratio}");
        assert!(at.best.makespan <= at.eq25.makespan + 1e-9, "ratio {ratio}");
        assert_eq!(at.none.tasks_moved, 0);
    }
    // Eq. 25 on the paper's inputs gives the paper's transfer.
    assert_eq!(report.eq25[0].tasks, TASKS);
    assert!(report.compensated_transfer().is_some());
    assert_eq!(report.cases.len(), 5);
    assert!(matches!(
        Mirtaheri::new().ratios(vec![0.0]).run(&|| {}),
        Err(MirtaheriError::Ratio(_))
    ));
}

#[test]
fn mirtaheri_does_not_depend_on_the_thread_count() {
    let run = |threads| {
        on_threads(threads, || {
            Mirtaheri::new()
                .runs(6)
                .ratios(vec![0.5])
                .run(&|| {})
                .unwrap()
                .scenarios
                .iter()
                .map(|r| (r.poisson_mean.to_bits(), r.poisson_sd.to_bits()))
                .collect::<Vec<_>>()
        })
    };
    assert_eq!(run(1), run(3));
}

fn small_grid() -> Config {
    Config::new()
        .sizes(vec![8, 16])
        .totals(vec![300])
        .distributions(vec![Distribution::Single, Distribution::Varying(50)])
        .seeds(2)
}

#[test]
fn response_cells_cover_the_grid_and_no_run_beats_the_fluid_bound() {
    let policies = vec![
        Policy::None,
        Policy::Rule(Algorithm::Dishet),
        Policy::Rule(Algorithm::Diffusion),
    ];
    let report = Response::new(small_grid(), policies.clone())
        .run(&|| {})
        .unwrap();
    assert_eq!(report.cells.len(), 2 * 2 * policies.len());
    for c in &report.cells {
        assert!(c.makespan >= c.ideal_makespan - 1e-9, "{c:?}");
        assert_eq!(c.trials, 2);
        if c.policy == "none" {
            assert_eq!(c.tasks_moved, 0.0);
            assert_eq!(c.rounds, 0.0);
        }
    }
    assert_eq!(report.dishet_best().map(|(_, cells)| cells), Some(2 * 2));
}

#[test]
fn response_does_not_depend_on_the_thread_count() {
    let run = |threads| {
        on_threads(threads, || {
            let policies = vec![Policy::None, Policy::Rule(Algorithm::Dishet)];
            Response::new(small_grid(), policies)
                .run(&|| {})
                .unwrap()
                .cells
                .iter()
                .map(|c| (c.response_time.to_bits(), c.makespan.to_bits()))
                .collect::<Vec<_>>()
        })
    };
    assert_eq!(run(1), run(2));
}

#[test]
fn response_refuses_what_cannot_run() {
    assert!("oem".parse::<Policy>().is_err());
    assert!("nothing".parse::<Policy>().is_err());
    assert_eq!("none".parse::<Policy>().unwrap(), Policy::None);
    let grid = small_grid();
    assert!(matches!(
        Response::new(grid.clone(), vec![]).run(&|| {}),
        Err(DishetError::NoPolicy)
    ));
    assert!(matches!(
        Response::new(grid, vec![Policy::None])
            .interval(1e-9)
            .run(&|| {}),
        Err(DishetError::Interval { .. })
    ));
}

#[test]
fn efp_tasks_give_every_processor_work_and_never_split_a_row() {
    use hetlb_core::rules::self_scheduling::Policy as Scheduling;
    use hetlb_runtime::grain::Grain;
    for (procs, size) in [(2, 10), (9, 30), (9, 1000), (64, 100)] {
        let grain = Grain::matmul(None, 3, 1, procs, size, &[Scheduling::Efp]).unwrap();
        let (g, why) = (grain.tasks, grain.source);
        assert!(g <= size, "{procs} {size}: {g} ({why})");
        assert!(
            g >= Scheduling::Efp.minimum_tasks(procs).min(size),
            "{procs} {size}: {g} ({why})"
        );
    }
    assert!(matches!(
        Efp::new()
            .grain_n(0)
            .sizes(vec![30])
            .sweep(vec![])
            .run_threads(&mut |_| {}),
        Err(EfpError::Granularity(_))
    ));
    assert!(matches!(
        Efp::new().sizes(vec![0]).check(),
        Err(EfpError::Size(0))
    ));
    assert!(matches!(
        Efp::new().sizes(vec![]).check(),
        Err(EfpError::NoSizes)
    ));
    assert!(matches!(
        Efp::new().sweep(vec![1]).check(),
        Err(EfpError::SweepProcs(1))
    ));
}

#[test]
fn efp_reports_a_correct_product_and_every_row_once() {
    let report = Efp::new()
        .sizes(vec![50])
        .procs(4)
        .sweep(vec![2, 3])
        .sweep_size(30)
        .run_threads(&mut |_| {})
        .unwrap();
    assert_eq!(report.tables.len(), 2);
    assert_eq!(report.sweep_points.len(), 4);
    for p in report.tables.iter().chain(&report.sweep_points) {
        let rows: u64 = p.processors.iter().map(|q| q.rows).sum();
        assert_eq!(rows, p.size);
        assert!(p.max_error.is_some_and(|e| e <= 1e-9));
        assert!(report.reference(p).is_some());
        assert!((0.0..=1.0).contains(&p.finish_spread()));
    }
    assert!(report.sweep_skipped.is_empty());
    assert_eq!(report.paper_figures, paper::efp::FIGURES);
}
