//! Ranks grouped into bands, and samples put on a grid: what keeps the page readable for
//! 1,024 ranks and a million events.

/// Bands of ranks at most in the lines of load.
pub(crate) const MAX_LINES: usize = 16;
/// Bands of ranks at most in the migration matrix.
pub(crate) const MAX_BANDS: usize = 32;
/// Rows of the heat map at most.
pub(crate) const MAX_ROWS: usize = 128;
/// Columns of the heat map at most.
pub(crate) const MAX_COLS: usize = 160;
/// Points of a line at most.
pub(crate) const MAX_POINTS: usize = 400;

/// `n` ranks in at most `max` bands of consecutive ranks: each band's first and last rank.
pub(crate) fn bands(n: usize, max: usize) -> Vec<(usize, usize)> {
    let per = n.div_ceil(max.max(1)).max(1);
    (0..n)
        .step_by(per)
        .map(|first| (first, (first + per).min(n) - 1))
        .collect()
}

/// A band's name.
pub(crate) fn band_label(prefix: &str, (first, last): (usize, usize)) -> String {
    if first == last {
        format!("{prefix} {first}")
    } else {
        format!("{prefix}s {first}–{last}")
    }
}

/// The band of rank `r`.
pub(crate) fn band_of(bands: &[(usize, usize)], r: usize) -> usize {
    bands.partition_point(|&(_, last)| last < r)
}

/// `points` (sorted by x) thinned to at most `max`: the point of largest |y| in each run
/// of consecutive points (peaks survive), the last point kept.
pub(crate) fn thin(points: &[[f64; 2]], max: usize) -> Vec<[f64; 2]> {
    if points.len() <= max {
        return points.to_vec();
    }
    let per = points.len().div_ceil(max);
    let mut out: Vec<[f64; 2]> = points
        .chunks(per)
        .map(|c| {
            *c.iter()
                .max_by(|a, b| a[1].abs().total_cmp(&b[1].abs()))
                .unwrap_or(&c[0])
        })
        .collect();
    if let (Some(last), Some(p)) = (points.last(), out.last_mut()) {
        *p = *last;
    }
    out
}

/// The mean, min and max of `values` (`None` skipped).
pub(crate) fn stats(values: impl Iterator<Item = Option<f64>>) -> Option<(f64, f64, f64)> {
    let (mut n, mut sum, mut lo, mut hi) = (0usize, 0.0, f64::INFINITY, f64::NEG_INFINITY);
    for v in values.flatten() {
        n += 1;
        sum += v;
        lo = lo.min(v);
        hi = hi.max(v);
    }
    (n > 0).then(|| (sum / n as f64, lo, hi))
}

/// A step function's value at each point of `grid`: the last sample at or before it.
pub(crate) fn sample(series: &[[f64; 2]], grid: &[f64]) -> Vec<Option<f64>> {
    let mut k = 0;
    let mut current = None;
    grid.iter()
        .map(|&x| {
            while k < series.len() && series[k][0] <= x {
                current = Some(series[k][1]);
                k += 1;
            }
            current
        })
        .collect()
}

/// `n` points evenly from `lo` to `hi`.
pub(crate) fn even(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let n = n.max(2);
    (0..n)
        .map(|i| lo + (hi - lo) * i as f64 / (n - 1) as f64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_cover_every_rank_once() {
        for n in [1, 2, 31, 32, 33, 1024, 1000] {
            let b = bands(n, MAX_BANDS);
            assert!(b.len() <= MAX_BANDS);
            assert_eq!(b[0].0, 0);
            assert_eq!(b.last().unwrap().1, n - 1);
            for r in 0..n {
                let i = band_of(&b, r);
                assert!(b[i].0 <= r && r <= b[i].1);
            }
        }
    }

    #[test]
    fn thinning_keeps_peaks_and_the_end() {
        let p: Vec<[f64; 2]> = (0..1000)
            .map(|i| [i as f64, if i == 500 { 9.0 } else { 1.0 }])
            .collect();
        let t = thin(&p, 100);
        assert!(t.len() <= 100);
        assert!(t.iter().any(|q| q[1] == 9.0));
        assert_eq!(t.last().unwrap()[0], 999.0);
    }
}
