//! Statistics over repeated measurements: pure functions, no I/O.
//!
//! Every point of a run is summarized the same way ([`Summary::of`]): its median, min and max,
//! the 95th percentile only from 20 repeats on (below that it is the max, or an interpolation
//! towards it), and a confidence interval of the median.
//!
//! **Which interval, and why.** The interval of a median is the distribution-free order-statistic
//! interval (the sign-test interval): `[X_(j), X_(n+1−j)]` of the n sorted repeats, with the
//! largest `j` whose coverage `P(X_(j) ≤ median ≤ X_(n+1−j)) = 1 − 2·P(B ≤ j − 1)`, `B ~
//! Binomial(n, ½)`, is still at least 95%. It assumes only independent repeats of one
//! continuous distribution (with ties it covers at least as much), and its coverage is known
//! exactly at the n taken, so it is reported with the interval (`ci_coverage`). A percentile
//! bootstrap of the median, which this replaces, claims 95% but at 5 repeats can only return
//! values between the min and the max: it always returned [min, max], which covers 93.75%.
//!
//! **Too few repeats for 95%.** Below 6 repeats no pair of order statistics reaches 95%: the
//! interval is then [min, max] and reports what it does cover (50% at 2 repeats, 75% at 3,
//! 87.5% at 4, 93.75% at 5), so a reader sees that it is short of 95% rather than an interval
//! that pretends; one repeat has no interval.
//!
//! **Ratios.** Two strategies at one point ran next to each other in every repeat (a profile's
//! strategies interleave within each repeat), so their repeats are pairs: their ratio is summarized by the median of
//! the per-repeat ratios with the same order-statistic interval ([`Summary::of`] over the
//! ratios), exact for pairs as it is for single values, and the pairing cancels what drifts
//! between repeats. A target and its baseline ran apart (the baseline after the whole target),
//! so they are not pairs: their ratio is the ratio of the two medians, and its interval
//! ([`ratio_of_medians`]) divides the two medians' intervals, each taken at √95% ≈ 97.5%. The
//! samples are independent, so both intervals hold together with probability at least the
//! product of their coverages, and then the ratio of the true medians lies in `[low_a / high_b,
//! high_a / low_b]`: that product is reported, as a lower bound. A bootstrap of either ratio
//! would need more repeats than a run takes to be trusted at 95%.
//!
//! No interval here is drawn at random, so a CSV always gives the same intervals.

/// Coverage the confidence intervals aim at.
pub const CONFIDENCE: f64 = 0.95;

/// Fewest values a 95th percentile is reported from: below that it is the max or an
/// interpolation towards it, not a percentile.
pub const P95_MIN_N: usize = 20;

/// How an interval was obtained: a column of `summary.csv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// The order-statistic interval of a median (of values, or of paired ratios).
    OrderStatistic,
    /// The ratio of two independent medians' order-statistic intervals at √95% each.
    IndependentRatio,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::OrderStatistic => "order-statistic",
            Method::IndependentRatio => "independent-ratio",
        }
    }
}

/// A confidence interval and what it covers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
    /// Probability that the interval holds the true value: exact for the order-statistic
    /// interval of continuous data, a lower bound for [`Method::IndependentRatio`].
    pub coverage: f64,
    pub method: Method,
}

impl Interval {
    /// Whether the interval covers at least [`CONFIDENCE`].
    pub fn reaches_confidence(&self) -> bool {
        self.coverage >= CONFIDENCE
    }

    /// Whether the interval covers at least [`CONFIDENCE`] and lies within `± precision ×
    /// center` of `center` (`precision = 0.05`: within 5% of the median on either side).
    pub fn within(&self, center: f64, precision: f64) -> bool {
        let half_width = (center - self.low).max(self.high - center);
        self.reaches_confidence() && half_width <= precision * center.abs()
    }
}

/// `values` sorted ascending (NaNs last).
fn sorted(values: &[f64]) -> Vec<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
}

/// The median of `values` (the mean of the two middle values for an even count); `None` when
/// empty. NaNs sort last and so only matter when they are the majority.
pub fn median(values: &[f64]) -> Option<f64> {
    quantile_of_sorted(&sorted(values), 0.5)
}

/// The `q` quantile (0 to 1) of `sorted`, interpolating linearly between order statistics
/// (Hyndman and Fan's type 7, the default of R and NumPy); `None` when empty.
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

/// Most values an interval is computed from: [`binomial_half_cdf`] is exact or within a few
/// ulps up to here (0.5^n stays a normal float). Experiment files cap repeats at this.
pub const MAX_N: usize = 1_000;

/// `P(B ≤ k)` for `B ~ Binomial(n, ½)`: `Σ_{i ≤ k} C(n, i) / 2^n`, term by term. Each term is a
/// dyadic fraction, so the sum is exact while `C(n, i) < 2^53` (n up to about 50) and within a
/// few ulps beyond. Written out rather than taken from `statrs`, whose CDF goes through the
/// incomplete beta function and is off in the last digits (0.9375000000000004 for the
/// coverage at 5 repeats), which would show in summary.csv.
fn binomial_half_cdf(n: usize, k: usize) -> f64 {
    assert!(
        n <= MAX_N,
        "{n} values: intervals are computed from at most {MAX_N}"
    );
    let mut term = 0.5f64.powi(n as i32);
    let mut sum = 0.0;
    for i in 0..=k.min(n) {
        sum += term;
        term = term * (n - i) as f64 / (i + 1) as f64;
    }
    sum
}

/// The coverage of `[X_(j), X_(n+1−j)]` (`j` from 1, at most n / 2) as an interval of the
/// median of n independent values: `1 − 2·P(B ≤ j − 1)` with `B ~ Binomial(n, ½)`, the number
/// of values below the median.
pub fn order_statistic_coverage(n: usize, j: usize) -> f64 {
    assert!(
        (1..=n / 2).contains(&j),
        "order statistic {j} of {n} values does not bound an interval of the median"
    );
    1.0 - 2.0 * binomial_half_cdf(n, j - 1)
}

/// The narrowest symmetric order-statistic interval of the median of `values` covering at
/// least `level`, or [min, max] with its lower coverage when no pair reaches `level` (fewer
/// than 6 values at 95%); `None` for fewer than 2 values.
pub fn median_interval(values: &[f64], level: f64) -> Option<Interval> {
    interval_of_sorted(&sorted(values), level)
}

fn interval_of_sorted(sorted: &[f64], level: f64) -> Option<Interval> {
    let n = sorted.len();
    if n < 2 {
        return None;
    }
    let mut j = 1;
    while j < n / 2 && order_statistic_coverage(n, j + 1) >= level {
        j += 1;
    }
    Some(Interval {
        low: sorted[j - 1],
        high: sorted[n - j],
        coverage: order_statistic_coverage(n, j),
        method: Method::OrderStatistic,
    })
}

/// What a point's repeats (or a point's paired ratios) are summarized to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Values summarized.
    pub n: usize,
    pub median: f64,
    /// The 95th percentile; `None` below [`P95_MIN_N`] values.
    pub p95: Option<f64>,
    pub min: f64,
    pub max: f64,
    /// The median's order-statistic interval; `None` for one value.
    pub ci: Option<Interval>,
}

impl Summary {
    /// The summary of `values`; `None` when empty.
    pub fn of(values: &[f64]) -> Option<Summary> {
        let sorted = sorted(values);
        Some(Summary {
            n: sorted.len(),
            median: quantile_of_sorted(&sorted, 0.5)?,
            p95: (sorted.len() >= P95_MIN_N)
                .then(|| quantile_of_sorted(&sorted, 0.95))
                .flatten(),
            min: *sorted.first()?,
            max: *sorted.last()?,
            ci: interval_of_sorted(&sorted, CONFIDENCE),
        })
    }

    /// Whether the median's interval covers 95% and lies within `± precision × median`: the
    /// criterion of a profile's `precision`.
    pub fn within(&self, precision: f64) -> bool {
        self.ci.is_some_and(|ci| ci.within(self.median, precision))
    }
}

/// A ratio of two independent samples' medians with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    pub value: f64,
    /// Values in the numerator's and the denominator's samples.
    pub n: (usize, usize),
    /// `None` when a sample has one value, or the denominator's interval reaches 0.
    pub ci: Option<Interval>,
}

/// `median(numerator) ÷ median(denominator)` for independent samples, with the interval of
/// the module's doc (each median's interval at √[`CONFIDENCE`], divided); `None` when a
/// sample is empty or the denominator's median is not positive.
pub fn ratio_of_medians(numerator: &[f64], denominator: &[f64]) -> Option<Ratio> {
    let (top, bottom) = (median(numerator)?, median(denominator)?);
    if bottom <= 0.0 {
        return None;
    }
    let level = CONFIDENCE.sqrt();
    let ci = match (
        median_interval(numerator, level),
        median_interval(denominator, level),
    ) {
        (Some(a), Some(b)) if b.low > 0.0 => Some(Interval {
            low: a.low / b.high,
            high: a.high / b.low,
            coverage: a.coverage * b.coverage,
            method: Method::IndependentRatio,
        }),
        _ => None,
    };
    Some(Ratio {
        value: top / bottom,
        n: (numerator.len(), denominator.len()),
        ci,
    })
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

    fn quantile(values: &[f64], q: f64) -> Option<f64> {
        quantile_of_sorted(&sorted(values), q)
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

    /// `1 − 2·Σ_{i<j} C(n, i) / 2^n`, summed in integers (n ≤ 120).
    fn exact_coverage(n: u32, j: u32) -> f64 {
        let mut choose = 1u128;
        let mut below = 0u128;
        for i in 0..j as u128 {
            below += choose;
            choose = choose * (n as u128 - i) / (i + 1);
        }
        1.0 - (2 * below) as f64 / 2f64.powi(n as i32)
    }

    #[test]
    fn coverages_are_the_exact_binomial_sums() {
        assert_eq!(order_statistic_coverage(5, 1), 0.9375);
        assert_eq!(order_statistic_coverage(10, 2), 0.978515625);
        for n in 2..=120u32 {
            for j in 1..=n / 2 {
                let (ours, exact) = (
                    order_statistic_coverage(n as usize, j as usize),
                    exact_coverage(n, j),
                );
                if n <= 50 {
                    assert_eq!(ours, exact, "n={n} j={j}");
                }
                assert!(
                    (ours - exact).abs() < 1e-13,
                    "n={n} j={j}: {ours} vs {exact}"
                );
            }
        }
        // At the cap, the normal approximation's rank: 500 − 1.96·√1000 / 2 ≈ 469.
        let values: Vec<f64> = (0..MAX_N).map(|i| i as f64).collect();
        let ci = median_interval(&values, CONFIDENCE).unwrap();
        assert!((0.95..0.955).contains(&ci.coverage), "{}", ci.coverage);
        assert_eq!(ci.low, 468.0, "the 469th value");
    }

    #[test]
    fn the_interval_is_the_textbook_pair_of_order_statistics() {
        let ranks = |n: usize| {
            let values: Vec<f64> = (1..=n).map(|i| i as f64).collect();
            let ci = median_interval(&values, CONFIDENCE).unwrap();
            (ci.low as usize, ci.high as usize)
        };
        // The sign-test intervals of the median at 95% found in tables: (1, 6) at n = 6,
        // (2, 9) at n = 10, (6, 15) at n = 20, (10, 21) at n = 30.
        assert_eq!(ranks(6), (1, 6));
        assert_eq!(ranks(10), (2, 9));
        assert_eq!(ranks(20), (6, 15));
        assert_eq!(ranks(30), (10, 21));
        for n in 6..=200 {
            let ci = median_interval(&vec![1.0; n], CONFIDENCE).unwrap();
            assert!(ci.coverage >= CONFIDENCE, "n={n}: {}", ci.coverage);
        }
    }

    #[test]
    fn below_six_repeats_the_interval_is_min_to_max_and_says_what_it_covers() {
        let ci = median_interval(&[5.0, 1.0, 4.0, 2.0, 3.0], CONFIDENCE).unwrap();
        assert_eq!((ci.low, ci.high, ci.coverage), (1.0, 5.0, 0.9375));
        assert!(!ci.reaches_confidence());
        for (n, coverage) in [(2, 0.5), (3, 0.75), (4, 0.875)] {
            let values: Vec<f64> = (0..n).map(f64::from).collect();
            assert_eq!(
                median_interval(&values, CONFIDENCE).unwrap().coverage,
                coverage
            );
        }
        assert_eq!(median_interval(&[1.0], CONFIDENCE), None);
        assert_eq!(median_interval(&[], CONFIDENCE), None);
        assert!(
            median_interval(&[1.0; 6], CONFIDENCE)
                .unwrap()
                .reaches_confidence()
        );
    }

    #[test]
    fn the_interval_covers_the_true_median_as_often_as_it_says() {
        // 4,000 samples of 10 from a known distribution (uniform on 0..1, median ½): the
        // (2, 9) interval covers 97.85%, so it must hold ½ in 3,914 of them give or take the
        // binomial noise (sd ≈ 9), and not in all.
        let mut rng = fastrand::Rng::with_seed(99);
        let trials = 4_000;
        let held = (0..trials)
            .filter(|_| {
                let sample: Vec<f64> = (0..10).map(|_| rng.f64()).collect();
                let ci = median_interval(&sample, CONFIDENCE).unwrap();
                ci.low <= 0.5 && 0.5 <= ci.high
            })
            .count();
        assert!((3_870..3_960).contains(&held), "held in {held} of {trials}");
    }

    #[test]
    fn a_summary_has_every_statistic_and_a_p95_only_from_20_values() {
        let s = Summary::of(&[5.0, 1.0, 4.0, 2.0, 3.0]).unwrap();
        assert_eq!(
            (s.n, s.median, s.min, s.max, s.p95),
            (5, 3.0, 1.0, 5.0, None)
        );
        assert_eq!(s.ci.map(|ci| (ci.low, ci.high)), Some((1.0, 5.0)));
        let twenty: Vec<f64> = (1..=20).map(f64::from).collect();
        // numpy.percentile(range(1, 21), 95) == 19.05
        assert!((Summary::of(&twenty).unwrap().p95.unwrap() - 19.05).abs() < 1e-12);
        assert_eq!(Summary::of(&twenty[..19]).unwrap().p95, None);
        assert_eq!(Summary::of(&[7.0]).unwrap().ci, None);
        assert_eq!(Summary::of(&[]), None);
    }

    #[test]
    fn precision_needs_95_percent_and_a_narrow_enough_interval() {
        // 10 values from 98 to 102 around 100: the (2, 9) interval is [99, 101.5].
        let values = [
            98.0, 99.0, 99.5, 100.0, 100.0, 100.0, 100.5, 101.0, 101.5, 102.0,
        ];
        let s = Summary::of(&values).unwrap();
        assert_eq!(s.ci.map(|ci| (ci.low, ci.high)), Some((99.0, 101.5)));
        assert!(s.within(0.05) && s.within(0.015));
        assert!(!s.within(0.01), "101.5 is 1.5% above the median");
        // Five identical values: a zero-width interval, but only 93.75% of coverage.
        assert!(!Summary::of(&[100.0; 5]).unwrap().within(0.05));
        assert!(Summary::of(&[100.0; 6]).unwrap().within(0.05));
        assert!(!Summary::of(&[100.0]).unwrap().within(0.05));
    }

    #[test]
    fn experiment_files_ask_for_no_more_repeats_than_an_interval_takes() {
        use crate::studies::sweep::{FEWEST_REPEATS_FOR_95, MAX_REPEATS};
        const { assert!(MAX_REPEATS <= MAX_N) };
        let n = FEWEST_REPEATS_FOR_95;
        assert!(order_statistic_coverage(n, 1) >= CONFIDENCE);
        assert!(order_statistic_coverage(n - 1, 1) < CONFIDENCE);
    }

    #[test]
    fn an_independent_ratio_divides_the_two_intervals_and_multiplies_their_coverage() {
        let a: Vec<f64> = (1..=10).map(|i| 100.0 + i as f64).collect();
        let b: Vec<f64> = (1..=10).map(|i| 10.0 + i as f64 / 10.0).collect();
        let r = ratio_of_medians(&a, &b).unwrap();
        assert_eq!(r.value, median(&a).unwrap() / median(&b).unwrap());
        assert_eq!(r.n, (10, 10));
        let ci = r.ci.unwrap();
        // At √95% and n = 10 each median's interval is (2, 9), covering 97.85%.
        assert_eq!((ci.low, ci.high), (a[1] / b[8], a[8] / b[1]));
        assert_eq!(ci.coverage, 0.978515625 * 0.978515625);
        assert!(ci.reaches_confidence());
        // Five each: [min, max] of both, covering at least 0.9375² < 95%.
        let r = ratio_of_medians(&a[..5], &b[..5]).unwrap();
        assert_eq!(
            r.ci.map(|ci| (ci.low, ci.high, ci.coverage)),
            Some((a[0] / b[4], a[4] / b[0], 0.9375 * 0.9375))
        );
        assert_eq!(ratio_of_medians(&a[..1], &b).unwrap().ci, None);
        assert_eq!(ratio_of_medians(&a, &[0.0, 0.0]), None);
        assert_eq!(ratio_of_medians(&[], &b), None);
    }
}
