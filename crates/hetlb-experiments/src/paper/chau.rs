//! Chau & Fu, *Load Balancing Between Heterogenous Computing Clusters*: Tables 1–2 (§3), as
//! printed.

/// One row of Chau & Fu's Tables 1–2 (§3): for an `n`-cube, how many of 100,000
/// random trials ended with max difference `0..=7`, and the average the paper prints.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChauRow {
    /// Hypercube dimension.
    pub n: u32,
    /// Trials with max difference 0, 1, …, 7.
    pub counts: [u64; 8],
    /// The printed average ("Avg diff").
    pub average: f64,
}

/// Trials per row in Chau & Fu's tables.
pub const CHAU_TRIALS: u64 = 100_000;

/// Chau & Fu, Table 1: "The maximum load difference between any two nodes after applying
/// DEM" (reproduced by the fixed-orientation rule, `dem-fixed`). As printed, the `n = 3` row
/// adds up to 99,999 trials, not 100,000.
pub const CHAU_TABLE1: [ChauRow; 10] = [
    ChauRow {
        n: 3,
        counts: [780, 49256, 49170, 793, 0, 0, 0, 0],
        average: 1.50,
    },
    ChauRow {
        n: 4,
        counts: [0, 12827, 73855, 13318, 0, 0, 0, 0],
        average: 2.00,
    },
    ChauRow {
        n: 5,
        counts: [0, 863, 48776, 49446, 915, 0, 0, 0],
        average: 2.50,
    },
    ChauRow {
        n: 6,
        counts: [0, 3, 13053, 73697, 13237, 10, 0, 0],
        average: 3.00,
    },
    ChauRow {
        n: 7,
        counts: [0, 0, 864, 48815, 49461, 860, 0, 0],
        average: 3.50,
    },
    ChauRow {
        n: 8,
        counts: [0, 0, 9, 14547, 73490, 11952, 2, 0],
        average: 3.97,
    },
    ChauRow {
        n: 9,
        counts: [0, 0, 0, 859, 48865, 49393, 883, 0],
        average: 4.50,
    },
    ChauRow {
        n: 10,
        counts: [0, 0, 0, 2, 11820, 73180, 14991, 7],
        average: 5.03,
    },
    ChauRow {
        n: 11,
        counts: [0, 0, 0, 0, 905, 49152, 49024, 919],
        average: 5.50,
    },
    ChauRow {
        n: 12,
        counts: [0, 0, 0, 0, 4, 13340, 73414, 13242],
        average: 6.00,
    },
];

/// Chau & Fu, Table 2: "The maximum load difference between any two nodes after applying the
/// improved DEM" (`dem-improved`).
pub const CHAU_TABLE2: [ChauRow; 10] = [
    ChauRow {
        n: 3,
        counts: [9375, 87483, 3142, 0, 0, 0, 0, 0],
        average: 0.94,
    },
    ChauRow {
        n: 4,
        counts: [2030, 87595, 10375, 0, 0, 0, 0, 0],
        average: 1.08,
    },
    ChauRow {
        n: 5,
        counts: [104, 79546, 20350, 0, 0, 0, 0, 0],
        average: 1.20,
    },
    ChauRow {
        n: 6,
        counts: [0, 69903, 30097, 0, 0, 0, 0, 0],
        average: 1.30,
    },
    ChauRow {
        n: 7,
        counts: [0, 60765, 39235, 0, 0, 0, 0, 0],
        average: 1.39,
    },
    ChauRow {
        n: 8,
        counts: [0, 52938, 47062, 0, 0, 0, 0, 0],
        average: 1.47,
    },
    ChauRow {
        n: 9,
        counts: [0, 47435, 52565, 0, 0, 0, 0, 0],
        average: 1.53,
    },
    ChauRow {
        n: 10,
        counts: [0, 43649, 56351, 0, 0, 0, 0, 0],
        average: 1.56,
    },
    ChauRow {
        n: 11,
        counts: [0, 39580, 60420, 0, 0, 0, 0, 0],
        average: 1.60,
    },
    ChauRow {
        n: 12,
        counts: [0, 34671, 65329, 0, 0, 0, 0, 0],
        average: 1.65,
    },
];
