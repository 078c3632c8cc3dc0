//! Statistics over repeated measurements: pure functions, no I/O.
//!
//! Every point of a run is summarized the same way ([`Summary::of`]): median, 95th percentile,
//! min, max, and a 95% confidence interval of the median by bootstrap resampling. The bootstrap is
//! seeded, so the same measurements always give the same interval.

/// Resamples drawn for a bootstrap interval.
pub const BOOTSTRAP_RESAMPLES: usize = 2_000;
/// Seed of the bootstrap's generator: fixed, so a run's summary is reproducible from its CSV.
pub const BOOTSTRAP_SEED: u64 = 0xD1BE_4C4B;
/// Coverage of the confidence intervals.
pub const CONFIDENCE: f64 = 0.95;

/// `values` sorted ascending (NaNs last).
fn sorted(values: &[f64]) -> Vec<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
}

/// The median of `values` (the mean of the two middle values for an even count); `None` when
/// empty. NaNs sort last and so only matter when they are the majority.
pub fn median(values: &[f64]) -> Option<f64> {
    quantile(values, 0.5)
}

/// The `q` quantile (0 to 1) of `values`, interpolating linearly between order statistics
/// (Hyndman and Fan's type 7, the default of R and NumPy); `None` when empty.
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    quantile_of_sorted(&sorted(values), q)
}

fn quantile_of_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let position = q.clamp(0.0, 1.0) * last as f64;
    let below = position.floor() as usize;
    let above = position.ceil() as usize;
    let fraction = position - below as f64;
    Some(if below == above {
        sorted[below]
    } else {
        sorted[below] + (sorted[above] - sorted[below]) * fraction
    })
}

/// SplitMix64: small and well mixed, enough to draw resampling indexes reproducibly.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// An index below `n` (n ≤ 2^32, so the modulo bias is below 2^-32).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The medians of `resamples` resamples of `values` with replacement, drawn from `seed`; empty
/// when `values` is.
fn bootstrap_medians(values: &[f64], resamples: usize, seed: u64) -> Vec<f64> {
    if values.is_empty() {
        return Vec::new();
    }
    let mut rng = SplitMix64(seed);
    let mut sample = vec![0.0; values.len()];
    (0..resamples)
        .filter_map(|_| {
            for slot in &mut sample {
                *slot = values[rng.below(values.len())];
            }
            median(&sample)
        })
        .collect()
}

/// The `(1 − level) / 2` and `(1 + level) / 2` quantiles of `draws`: a percentile interval.
fn percentile_interval(draws: &[f64], level: f64) -> Option<(f64, f64)> {
    let draws = sorted(draws);
    let tail = (1.0 - level.clamp(0.0, 1.0)) / 2.0;
    Some((
        quantile_of_sorted(&draws, tail)?,
        quantile_of_sorted(&draws, 1.0 - tail)?,
    ))
}

/// A percentile-bootstrap confidence interval of the median: `resamples` resamples of `values`
/// with replacement, drawn from `seed`, and the `(1 − level) / 2` and `(1 + level) / 2`
/// quantiles of their medians. `None` when `values` is empty or `resamples` is 0.
pub fn bootstrap_median_ci(
    values: &[f64],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Option<(f64, f64)> {
    percentile_interval(&bootstrap_medians(values, resamples, seed), level)
}

/// A percentile-bootstrap confidence interval of `median(b) ÷ median(a)`, for two independent
/// sets of measurements: each resampled on its own (`a` from `seed`, `b` from `seed + 1`, so the
/// draws of one say nothing of the other's), the ratio of the i-th medians taken `resamples`
/// times, and the `(1 − level) / 2` and `(1 + level) / 2` quantiles of those ratios. `None` when
/// either side is empty, `resamples` is 0, or a median of `a` is not above 0.
pub fn bootstrap_ratio_of_medians_ci(
    a: &[f64],
    b: &[f64],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Option<(f64, f64)> {
    let medians_a = bootstrap_medians(a, resamples, seed);
    let medians_b = bootstrap_medians(b, resamples, seed.wrapping_add(1));
    if medians_a.iter().any(|&m| m.is_nan() || m <= 0.0) {
        return None;
    }
    let ratios: Vec<f64> = medians_a
        .iter()
        .zip(&medians_b)
        .map(|(a, b)| b / a)
        .collect();
    percentile_interval(&ratios, level)
}

/// What a point's repeats are summarized to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Measurements summarized.
    pub n: usize,
    pub median: f64,
    /// 95th percentile.
    pub p95: f64,
    pub min: f64,
    pub max: f64,
    /// 95% bootstrap confidence interval of the median.
    pub ci_low: f64,
    pub ci_high: f64,
}

impl Summary {
    /// The summary of `values` (the bootstrap seeded with [`BOOTSTRAP_SEED`]); `None` when empty.
    pub fn of(values: &[f64]) -> Option<Summary> {
        let sorted = sorted(values);
        let (ci_low, ci_high) =
            bootstrap_median_ci(values, CONFIDENCE, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED)?;
        Some(Summary {
            n: values.len(),
            median: quantile_of_sorted(&sorted, 0.5)?,
            p95: quantile_of_sorted(&sorted, 0.95)?,
            min: *sorted.first()?,
            max: *sorted.last()?,
            ci_low,
            ci_high,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[7.0]), Some(7.0));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn quantiles_interpolate_like_r_and_numpy() {
        let values = [10.0, 20.0, 30.0, 40.0, 50.0];
        assert_eq!(quantile(&values, 0.0), Some(10.0));
        assert_eq!(quantile(&values, 1.0), Some(50.0));
        assert_eq!(quantile(&values, 0.25), Some(20.0));
        // numpy.percentile([10, 20, 30, 40, 50], 95) == 48.0
        assert_eq!(quantile(&values, 0.95), Some(48.0));
        // numpy.percentile([1, 2], 95) == 1.95
        assert!((quantile(&[2.0, 1.0], 0.95).unwrap() - 1.95).abs() < 1e-12);
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn the_bootstrap_interval_is_reproducible_and_holds_the_median() {
        let values = [12.0, 9.5, 11.0, 30.0, 10.5, 10.0, 9.8];
        let a = bootstrap_median_ci(&values, 0.95, 2_000, 7).unwrap();
        assert_eq!(a, bootstrap_median_ci(&values, 0.95, 2_000, 7).unwrap());
        let m = median(&values).unwrap();
        assert!(a.0 <= m && m <= a.1, "{a:?} does not hold {m}");
        // The interval of a median never reaches beyond the data, and ignores the outlier.
        assert!(a.0 >= 9.5 && a.1 < 30.0, "{a:?}");
        // Another seed draws other resamples: close, not necessarily equal.
        let b = bootstrap_median_ci(&values, 0.95, 2_000, 8).unwrap();
        assert!(
            (a.0 - b.0).abs() <= 1.0 && (a.1 - b.1).abs() <= 1.0,
            "{a:?} {b:?}"
        );
    }

    #[test]
    fn the_bootstrap_interval_narrows_with_more_data_and_is_a_point_without_spread() {
        assert_eq!(
            bootstrap_median_ci(&[4.0; 6], 0.95, 500, 1),
            Some((4.0, 4.0))
        );
        assert_eq!(bootstrap_median_ci(&[4.0], 0.95, 500, 1), Some((4.0, 4.0)));
        assert_eq!(bootstrap_median_ci(&[], 0.95, 500, 1), None);
        assert_eq!(bootstrap_median_ci(&[1.0], 0.95, 0, 1), None);
        // The same spread of values, 5 of them and then 200: the interval shrinks.
        let spread = |n: usize| -> Vec<f64> { (0..n).map(|i| (i % 5) as f64).collect() };
        let few = bootstrap_median_ci(&spread(5), 0.95, 2_000, 3).unwrap();
        let many = bootstrap_median_ci(&spread(200), 0.95, 2_000, 3).unwrap();
        assert!(many.1 - many.0 < few.1 - few.0, "{few:?} vs {many:?}");
    }

    #[test]
    fn the_bootstrap_interval_covers_the_true_median_about_95_percent_of_the_time() {
        // Samples of 15 from a known distribution (uniform on 0..100, median 50), each with its
        // own seed: a 95% interval must hold 50 in most of them, but not in all.
        let mut rng = SplitMix64(99);
        let trials = 200u64;
        let held = (0..trials)
            .filter(|&t| {
                let sample: Vec<f64> = (0..15)
                    .map(|_| (rng.next() % 10_001) as f64 / 100.0)
                    .collect();
                let (lo, hi) = bootstrap_median_ci(&sample, 0.95, 1_000, t).unwrap();
                lo <= 50.0 && 50.0 <= hi
            })
            .count() as u64;
        assert!((170..trials).contains(&held), "held in {held} of {trials}");
    }

    #[test]
    fn the_ratio_of_medians_interval_resamples_each_side_on_its_own() {
        let a = [10.0, 10.4, 9.7, 10.1, 9.9];
        // The same values on both sides: were they drawn with the same indexes, every ratio
        // would be exactly 1; drawn independently, the interval has width, and holds 1.
        let (lo, hi) = bootstrap_ratio_of_medians_ci(&a, &a, 0.95, 2_000, 5).unwrap();
        assert!(lo < 1.0 && 1.0 < hi && hi - lo < 0.1, "{lo} {hi}");
        assert_eq!(
            bootstrap_ratio_of_medians_ci(&a, &a, 0.95, 2_000, 5),
            Some((lo, hi))
        );
        let tripled = a.map(|v| v * 3.0);
        let (lo, hi) = bootstrap_ratio_of_medians_ci(&a, &tripled, 0.95, 2_000, 5).unwrap();
        assert!(2.8 < lo && lo < 3.0 && 3.0 < hi && hi < 3.2, "{lo} {hi}");
        assert_eq!(bootstrap_ratio_of_medians_ci(&[], &a, 0.95, 100, 5), None);
        assert_eq!(bootstrap_ratio_of_medians_ci(&a, &[], 0.95, 100, 5), None);
        assert_eq!(bootstrap_ratio_of_medians_ci(&a, &a, 0.95, 0, 5), None);
        // A median of 0 ms in a: nothing to divide by.
        assert_eq!(
            bootstrap_ratio_of_medians_ci(&[0.0, 0.0, 1.0], &a, 0.95, 100, 5),
            None
        );
    }

    #[test]
    fn a_summary_has_every_statistic() {
        let s = Summary::of(&[5.0, 1.0, 4.0, 2.0, 3.0]).unwrap();
        assert_eq!((s.n, s.median, s.min, s.max), (5, 3.0, 1.0, 5.0));
        assert!((s.p95 - 4.8).abs() < 1e-12);
        assert!(s.ci_low <= 3.0 && 3.0 <= s.ci_high && s.ci_low >= 1.0 && s.ci_high <= 5.0);
        assert_eq!(Summary::of(&[]), None);
    }
}
