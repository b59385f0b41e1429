//! Aldasht, Ortega & Puntonet, *Dynamic load balancing in heterogeneous clusters: exploitation
//! of the processing power*: Tables 2–6 (rows and `T_exec`/`T_comp`/`T_comm`/`T_wait` per
//! processor, matrix orders 100 to 2000 on one fast and eight slow processors), printed beside
//! ours by `hetlb reproduce efp` and `hetlb run matmul`.
//!
//! The cluster: one Pentium III at 1000 MHz and eight Pentium II at 333 MHz on Fast Ethernet,
//! matrix multiplication in C with MPI (Aldasht, Ortega & Puntonet, Table 1). In every table the
//! processor listed last (8) has `T_comm = T_wait = 0` and by far the most rows: it is the master,
//! the fast node. Times are seconds.

/// What the paper gives for Figs. 3 and 9–11: captions only.
pub const FIGURES: &str = "Figs. 3 and 9–11 of Aldasht, Ortega & Puntonet survive only as captions (time against \
    the matrix order; time, efficiency and speedup against the number of processors for \
    1000 × 1000, static against EFP): there are no published numbers to compare those rows with.";

/// The processors of the paper's tables: one master and eight workers.
pub const PROCESSORS: usize = 9;

/// One row of a published table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaperRow {
    /// The processor number as printed.
    pub processor: usize,
    /// Rows of `C` it computed.
    pub rows: u64,
    /// `T_exec`.
    pub t_exec: f64,
    /// `T_comp`.
    pub t_comp: f64,
    /// `T_comm`.
    pub t_comm: f64,
    /// `T_wait`.
    pub t_wait: f64,
}

/// One published table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaperTable {
    /// The table's number in the paper.
    pub table: u32,
    /// The matrix order.
    pub size: usize,
    /// Its nine rows, as printed.
    pub rows: [PaperRow; 9],
}

const fn r(processor: usize, rows: u64, t: [f64; 4]) -> PaperRow {
    PaperRow {
        processor,
        rows,
        t_exec: t[0],
        t_comp: t[1],
        t_comm: t[2],
        t_wait: t[3],
    }
}

/// Tables 2–6 as printed.
pub const TABLES: [PaperTable; 5] = [
    PaperTable {
        table: 2,
        size: 100,
        rows: [
            r(0, 9, [0.072, 0.013, 0.055, 0.004]),
            r(1, 10, [0.071, 0.014, 0.049, 0.007]),
            r(2, 8, [0.072, 0.008, 0.06, 0.004]),
            r(3, 8, [0.071, 0.009, 0.057, 0.005]),
            r(4, 6, [0.07, 0.009, 0.052, 0.009]),
            r(5, 8, [0.072, 0.011, 0.05, 0.01]),
            r(6, 9, [0.072, 0.013, 0.048, 0.011]),
            r(7, 10, [0.072, 0.014, 0.046, 0.011]),
            r(8, 32, [0.078, 0.078, 0.0, 0.0]),
        ],
    },
    PaperTable {
        table: 3,
        size: 400,
        rows: [
            r(0, 38, [1.853, 1.457, 0.251, 0.146]),
            r(1, 37, [1.837, 1.426, 0.209, 0.202]),
            r(2, 46, [1.806, 1.221, 0.548, 0.036]),
            r(3, 40, [1.792, 1.249, 0.452, 0.091]),
            r(4, 32, [1.827, 1.37, 0.2, 0.257]),
            r(5, 36, [1.863, 1.38, 0.17, 0.313]),
            r(6, 34, [1.806, 1.297, 0.142, 0.367]),
            r(7, 34, [1.84, 1.294, 0.122, 0.424]),
            r(8, 103, [1.865, 1.865, 0.0, 0.0]),
        ],
    },
    PaperTable {
        table: 4,
        size: 800,
        rows: [
            r(0, 75, [13.667, 12.169, 0.928, 0.57]),
            r(1, 76, [13.999, 12.306, 0.903, 0.79]),
            r(2, 99, [13.35, 11.042, 2.178, 0.13]),
            r(3, 84, [13.269, 11.185, 1.735, 0.349]),
            r(4, 65, [13.517, 11.741, 0.765, 1.011]),
            r(5, 72, [13.725, 11.658, 0.835, 1.233]),
            r(6, 69, [13.503, 11.173, 0.874, 1.455]),
            r(7, 68, [13.441, 11.011, 0.749, 1.681]),
            r(8, 192, [14.039, 14.039, 0.0, 0.0]),
        ],
    },
    PaperTable {
        table: 5,
        size: 1000,
        rows: [
            r(0, 84, [24.996, 23.413, 0.698, 0.886]),
            r(1, 89, [26.786, 24.804, 0.747, 1.235]),
            r(2, 122, [26.001, 23.455, 2.346, 0.2]),
            r(3, 106, [25.667, 24.211, 0.914, 0.542]),
            r(4, 77, [26.243, 23.947, 0.714, 1.583]),
            r(5, 83, [25.699, 23.122, 0.642, 1.935]),
            r(6, 84, [26.331, 23.409, 0.635, 2.287]),
            r(7, 78, [24.916, 21.731, 0.542, 2.643]),
            r(8, 277, [26.829, 26.829, 0.0, 0.0]),
        ],
    },
    PaperTable {
        table: 6,
        size: 2000,
        rows: [
            r(0, 179, [211.706, 205.747, 2.361, 3.597]),
            r(1, 180, [213.177, 206.159, 2.013, 5.005]),
            r(2, 265, [213.088, 209.345, 2.937, 0.807]),
            r(3, 200, [195.12, 190.405, 2.518, 2.197]),
            r(4, 181, [212.706, 206.747, 2.361, 3.597]),
            r(5, 181, [217.244, 207.515, 1.859, 7.87]),
            r(6, 176, [212.779, 201.625, 1.828, 9.327]),
            r(7, 176, [214.054, 201.779, 1.484, 10.791]),
            r(8, 462, [218.367, 218.367, 0.0, 0.0]),
        ],
    },
];

/// The published table for a matrix of order `size`, if there is one.
///
/// # Example
/// ```
/// use hetlb_experiments::paper::efp::table_for;
/// let t = table_for(1000).unwrap();
/// assert_eq!(t.table, 5);
/// assert_eq!(t.rows.iter().map(|r| r.rows).sum::<u64>(), 1000);
/// ```
pub fn table_for(size: usize) -> Option<&'static PaperTable> {
    TABLES.iter().find(|t| t.size == size)
}

impl PaperTable {
    /// The master's rows divided by the mean rows of the other eight.
    pub fn master_ratio(&self) -> f64 {
        let others: u64 = self.rows[..8].iter().map(|r| r.rows).sum();
        self.rows[8].rows as f64 / (others as f64 / 8.0)
    }

    /// `(max − min) / max` of `T_exec`.
    pub fn finish_spread(&self) -> f64 {
        let max = self.rows.iter().map(|r| r.t_exec).fold(0.0, f64::max);
        let min = self
            .rows
            .iter()
            .map(|r| r.t_exec)
            .fold(f64::INFINITY, f64::min);
        (max - min) / max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_adds_up_to_its_matrix_order() {
        for t in &TABLES {
            let sum: u64 = t.rows.iter().map(|r| r.rows).sum();
            assert_eq!(sum, t.size as u64, "table {}", t.table);
        }
    }
}
