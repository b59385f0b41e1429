//! Dense matrix multiplication `C = A·B` split by rows, the benchmark of Aldasht, Ortega &
//! Puntonet, §5.
//!
//! A task is a block of consecutive rows of `A`; it travels to the worker with the rows (as
//! in the paper, where the master sends rows and receives rows of `C`), and the worker, which
//! holds `B`, returns the same rows of `C`. The kernel is `matrixmultiply::dgemm`. The result
//! is checked against [`Matrix::multiply_reference`], a plain triple loop on one thread.

use crate::error::TaskError;
use crate::job::Job;
use hetlb_core::rules::self_scheduling::split_evenly;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// A dense row-major matrix of `f64`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Matrix {
    rows: usize,
    cols: usize,
    data: Vec<f64>,
}

impl Matrix {
    /// A `rows × cols` matrix of zeros.
    pub fn zeros(rows: usize, cols: usize) -> Self {
        Self {
            rows,
            cols,
            data: vec![0.0; rows * cols],
        }
    }

    /// A `rows × cols` matrix of entries uniform in `[-1, 1)`, from a seeded PCG stream: the
    /// same seed gives the same matrix on every machine.
    ///
    /// # Complexity
    /// `O(rows·cols)`.
    ///
    /// # Example
    /// ```
    /// use hetlb_runtime::workload::matmul::Matrix;
    /// let a = Matrix::random(3, 4, 7);
    /// assert_eq!(a, Matrix::random(3, 4, 7));
    /// assert!(a.as_slice().iter().all(|x| (-1.0..1.0).contains(x)));
    /// ```
    pub fn random(rows: usize, cols: usize, seed: u64) -> Self {
        let mut rng = Pcg64::seed_from_u64(seed);
        let data = (0..rows * cols)
            .map(|_| rng.random_range(-1.0..1.0))
            .collect();
        Self { rows, cols, data }
    }

    /// From row-major data.
    ///
    /// # Errors
    /// A [`TaskError`] when `data` does not have `rows·cols` entries.
    pub fn from_vec(rows: usize, cols: usize, data: Vec<f64>) -> Result<Self, TaskError> {
        if rows.checked_mul(cols) != Some(data.len()) {
            return Err(TaskError::new(format!(
                "{} values for a {rows}×{cols} matrix",
                data.len()
            )));
        }
        Ok(Self { rows, cols, data })
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The entries, row after row.
    pub fn as_slice(&self) -> &[f64] {
        &self.data
    }

    /// Rows `range` as one slice.
    pub fn row_block(&self, range: Range<usize>) -> &[f64] {
        &self.data[range.start * self.cols..range.end * self.cols]
    }

    /// `self · other` by the textbook triple loop (`i-k-j` order) on one thread: the
    /// independent reference every parallel product is checked against.
    ///
    /// # Complexity
    /// `O(n·m·p)`.
    ///
    /// # Example
    /// ```
    /// use hetlb_runtime::workload::matmul::Matrix;
    /// let a = Matrix::from_vec(2, 2, vec![1.0, 2.0, 3.0, 4.0]).unwrap();
    /// let b = Matrix::from_vec(2, 1, vec![1.0, 1.0]).unwrap();
    /// assert_eq!(a.multiply_reference(&b).as_slice(), &[3.0, 7.0]);
    /// ```
    pub fn multiply_reference(&self, other: &Matrix) -> Matrix {
        let (n, k, m) = (self.rows, self.cols, other.cols);
        let mut c = Matrix::zeros(n, m);
        if k != other.rows {
            return c;
        }
        for i in 0..n {
            let out = &mut c.data[i * m..(i + 1) * m];
            for (p, &a) in self.data[i * k..(i + 1) * k].iter().enumerate() {
                let row = &other.data[p * m..(p + 1) * m];
                for (o, &b) in out.iter_mut().zip(row) {
                    *o += a * b;
                }
            }
        }
        c
    }

    /// The largest absolute difference between two matrices of the same shape
    /// (infinite if the shapes differ).
    pub fn max_abs_diff(&self, other: &Matrix) -> f64 {
        if (self.rows, self.cols) != (other.rows, other.cols) {
            return f64::INFINITY;
        }
        self.data
            .iter()
            .zip(&other.data)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
    }
}

/// `C[rows] = A[rows] · B` for a block of `m` rows of `A` (`m × k`) and `B` (`k × n`), with
/// `matrixmultiply::dgemm`.
///
/// # Errors
/// A [`TaskError`] when the slice lengths do not match the shapes.
///
/// # Complexity
/// `O(m·k·n)`.
///
/// # Example
/// ```
/// use hetlb_runtime::workload::matmul::multiply_rows;
/// let c = multiply_rows(&[1.0, 2.0], 1, &[3.0, 4.0], 1).unwrap();
/// assert_eq!(c, vec![11.0]);
/// ```
pub fn multiply_rows(a: &[f64], m: usize, b: &[f64], n: usize) -> Result<Vec<f64>, TaskError> {
    if m == 0 {
        return Ok(Vec::new());
    }
    let k = a.len() / m;
    if a.len() != m * k || b.len() != k * n {
        return Err(TaskError::new(format!(
            "shape mismatch: {} values of A for {m} rows, {} values of B for {n} columns",
            a.len(),
            b.len()
        )));
    }
    let mut c = vec![0.0; m * n];
    dgemm(a, b, &mut c, m, k, n);
    Ok(c)
}

#[allow(unsafe_code)]
fn dgemm(a: &[f64], b: &[f64], c: &mut [f64], m: usize, k: usize, n: usize) {
    debug_assert!(a.len() == m * k && b.len() == k * n && c.len() == m * n);
    if a.len() != m * k || b.len() != k * n || c.len() != m * n {
        return;
    }
    // SAFETY: the three slices hold exactly m·k, k·n and m·n elements (checked above) in
    // row-major order with the strides given (row stride = columns, column stride = 1), so
    // every element dgemm reads or writes is inside them; `c` is a distinct `&mut` slice and
    // cannot alias `a` or `b`. Shapes are far below isize::MAX for any matrix that fits in
    // memory.
    unsafe {
        matrixmultiply::dgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.as_ptr(),
            n as isize,
            1,
            0.0,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

/// One task: consecutive rows of `A`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowBlock {
    /// Index of the first row.
    pub first: u64,
    /// Number of rows.
    pub rows: u64,
    /// The rows of `A`, row-major.
    pub a: Vec<f64>,
}

/// `C = A·B` for random square `n × n` matrices, cut into `G` blocks of rows whose sizes
/// differ by at most one.
///
/// # Example
/// ```
/// use hetlb_runtime::workload::matmul::MatmulJob;
/// use hetlb_runtime::{run_sequential, Job};
/// let job = MatmulJob::new(20, 6, 1);
/// assert_eq!(job.tasks(), 6);
/// assert_eq!((0..6).map(|t| job.units(t)).sum::<u64>(), 20);
/// let (out, _) = run_sequential(&job).unwrap();
/// let c = job.assemble(&out).unwrap();
/// assert!(c.max_abs_diff(&job.reference()) < 1e-9);
/// ```
#[derive(Debug, Clone)]
pub struct MatmulJob {
    a: Matrix,
    b: Matrix,
    blocks: Vec<Range<u64>>,
}

impl MatmulJob {
    /// Random `n × n` matrices from `seed` (`A` from `seed`, `B` from `seed + 1`), cut into
    /// `granularity` row blocks (at most `n`, at least 1).
    ///
    /// # Complexity
    /// `O(n²)`.
    pub fn new(n: usize, granularity: u64, seed: u64) -> Self {
        let a = Matrix::random(n, n, seed);
        let b = Matrix::random(n, n, seed.wrapping_add(1));
        let g = granularity.clamp(1, (n as u64).max(1));
        Self {
            a,
            b,
            blocks: split_evenly(n as u64, g),
        }
    }

    /// The matrix order `n`.
    pub fn order(&self) -> usize {
        self.a.rows
    }

    /// The product by [`Matrix::multiply_reference`].
    pub fn reference(&self) -> Matrix {
        self.a.multiply_reference(&self.b)
    }

    /// Puts the row blocks back together into `C`.
    ///
    /// # Errors
    /// A [`TaskError`] when the blocks do not make up an `n × n` matrix.
    pub fn assemble(&self, outputs: &[Vec<f64>]) -> Result<Matrix, TaskError> {
        let n = self.order();
        let data: Vec<f64> = outputs.iter().flatten().copied().collect();
        Matrix::from_vec(n, n, data)
    }
}

impl Job for MatmulJob {
    type Task = RowBlock;
    type Output = Vec<f64>;

    fn tasks(&self) -> u64 {
        self.blocks.len() as u64
    }

    fn task(&self, id: u64) -> RowBlock {
        let r = self.blocks.get(id as usize).cloned().unwrap_or(0..0);
        RowBlock {
            first: r.start,
            rows: r.end - r.start,
            a: self.a.row_block(r.start as usize..r.end as usize).to_vec(),
        }
    }

    fn run(&self, task: &RowBlock) -> Result<Vec<f64>, TaskError> {
        multiply_rows(&task.a, task.rows as usize, self.b.as_slice(), self.b.cols)
    }

    fn units(&self, id: u64) -> u64 {
        self.blocks.get(id as usize).map_or(0, |r| r.end - r.start)
    }

    fn unit_name(&self) -> &'static str {
        "rows"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dgemm_agrees_with_the_triple_loop() {
        for (n, g) in [(1, 1), (7, 3), (33, 5), (64, 64)] {
            let job = MatmulJob::new(n, g, 3);
            let out: Vec<Vec<f64>> = (0..job.tasks())
                .map(|t| job.run(&job.task(t)).unwrap())
                .collect();
            let c = job.assemble(&out).unwrap();
            assert!(c.max_abs_diff(&job.reference()) < 1e-10 * n as f64);
        }
    }

    #[test]
    fn malformed_blocks_are_errors_not_panics() {
        assert!(multiply_rows(&[1.0, 2.0, 3.0], 2, &[1.0], 1).is_err());
        assert!(Matrix::from_vec(2, 2, vec![1.0]).is_err());
        let job = MatmulJob::new(4, 2, 0);
        let bad = RowBlock {
            first: 0,
            rows: 1,
            a: vec![1.0; 3],
        };
        assert!(job.run(&bad).is_err());
    }
}
