//! Order statistics: medians and quantiles of a sample, and their distribution-free
//! order-statistic intervals, `[X_(j), X_(k)]` of the n sorted values with the exact coverage
//! the binomial distribution gives the pair of ranks.
//!
//! Every point of a sweep is summarized the same way ([`Summary::of`]): its median, min and max,
//! the 95th percentile only from 20 repeats on (below that it is the max, or an interpolation
//! towards it), and a confidence interval of the median.
//!
//! **The interval of a median** is the sign-test interval ([`median_ranks`]): `[X_(j),
//! X_(n+1−j)]` with the largest `j` whose coverage `P(X_(j) ≤ median ≤ X_(n+1−j)) = 1 −
//! 2·P(B ≤ j − 1)`, `B ~ Binomial(n, ½)`, is still at least 95%. It assumes only independent
//! repeats of one continuous distribution (with ties it covers at least as much), and its
//! coverage is known exactly at the n taken, so it is reported with the interval
//! (`ci_coverage`). A percentile bootstrap of the median, which this replaces, claims 95% but at
//! 5 repeats can only return values between the min and the max: it always returned [min, max],
//! which covers 93.75%.
//!
//! **Too few repeats for 95%.** Below 6 repeats no pair of order statistics reaches 95%: the
//! interval is then [min, max] and reports what it does cover (50% at 2 repeats, 75% at 3,
//! 87.5% at 4, 93.75% at 5), so a reader sees that it is short of 95% rather than an interval
//! that pretends; one repeat has no interval.
//!
//! **The interval of the q-quantile** (a workload's latency percentiles, [`rank_interval`]):
//! with `B ~ Binomial(n, q)` the number of the n values below the true quantile `ξ_q`,
//! `P(X_(j) ≤ ξ_q < X_(k)) = P(j ≤ B ≤ k − 1)`. The ranks start at B's mode and widen `[j, k −
//! 1]` one rank at a time towards the more probable side until the mass reaches the level asked
//! (95%), so they are the narrowest such pair that this greedy walk finds, and their exact
//! coverage is reported. It assumes only independent values of one distribution; requests of one
//! open-loop run queue behind one another, so neighbouring latencies are correlated and the
//! coverage is optimistic there (the summary says so). When no pair reaches the level within the
//! n values (p99.9 needs a few thousand requests), there is no interval.
//!
//! Either way the ranks are a [`RankInterval`], turned into values once
//! ([`RankInterval::values`]) from a sorted sample or a histogram.

use super::{CONFIDENCE, Interval, Method};

/// Fewest values a 95th percentile is reported from: below that it is the max or an
/// interpolation towards it, not a percentile.
pub const P95_MIN_N: usize = 20;

/// Most values a median's interval is computed from: [`binomial_half_cdf`] is exact or within a
/// few ulps up to here (0.5^n stays a normal float). Experiment files cap repeats at this.
pub const MAX_N: usize = 1_000;

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

/// The rank (from 1) of the nearest-rank `q` quantile of `n` values: `⌈q·n⌉`.
pub fn nearest_rank(n: usize, q: f64) -> usize {
    ((q * n as f64).ceil() as usize).clamp(1, n.max(1))
}

/// The ranks (from 1) of an order-statistic interval `[X_(low), X_(high)]` of a median or a
/// quantile, and what it covers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankInterval {
    pub low: usize,
    pub high: usize,
    pub coverage: f64,
}

impl RankInterval {
    /// The interval of values at these ranks, `value_at(rank)` giving the value of a rank.
    pub fn values(self, value_at: impl Fn(usize) -> f64) -> Interval {
        Interval {
            low: value_at(self.low),
            high: value_at(self.high),
            coverage: self.coverage,
            method: Method::OrderStatistic,
        }
    }
}

/// `P(B ≤ k)` for `B ~ Binomial(n, ½)`: `Σ_{i ≤ k} C(n, i) / 2^n`, term by term. Each term is a
/// dyadic fraction, so the sum is exact while `C(n, i) < 2^53` (n up to about 50) and within a
/// few ulps beyond. Written out rather than taken from `statrs`, whose CDF goes through the
/// incomplete beta function and is off in the last digits (0.9375000000000004 for the
/// coverage at 5 repeats), which would show in summary.csv.
pub(crate) fn binomial_half_cdf(n: usize, k: usize) -> f64 {
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

/// The ranks of the narrowest symmetric interval of the median of `n` values covering at least
/// `level`, or [1, n] with its lower coverage when no pair reaches `level` (fewer than 6 values
/// at 95%); `None` for fewer than 2 values.
pub fn median_ranks(n: usize, level: f64) -> Option<RankInterval> {
    if n < 2 {
        return None;
    }
    let mut j = 1;
    while j < n / 2 && order_statistic_coverage(n, j + 1) >= level {
        j += 1;
    }
    Some(RankInterval {
        low: j,
        high: n + 1 - j,
        coverage: order_statistic_coverage(n, j),
    })
}

/// The interval of [`median_ranks`] over `values`.
pub fn median_interval(values: &[f64], level: f64) -> Option<Interval> {
    interval_of_sorted(&sorted(values), level)
}

fn interval_of_sorted(sorted: &[f64], level: f64) -> Option<Interval> {
    median_ranks(sorted.len(), level).map(|r| r.values(|rank| sorted[rank - 1]))
}

/// `ln(k!)`: summed exactly below 256, Stirling's series beyond (error below 1e-14 there).
fn ln_factorial(k: u64) -> f64 {
    if k < 256 {
        return (2..=k).map(|i| (i as f64).ln()).sum();
    }
    let x = k as f64;
    x * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI * x).ln() + 1.0 / (12.0 * x)
        - 1.0 / (360.0 * x.powi(3))
}

/// `P(B = i)` for `B ~ Binomial(n, q)`, computed in logs so no term under- or overflows.
fn binomial_pmf(n: u64, q: f64, i: u64) -> f64 {
    let ln = ln_factorial(n) - ln_factorial(i) - ln_factorial(n - i)
        + i as f64 * q.ln()
        + (n - i) as f64 * (1.0 - q).ln();
    ln.exp()
}

/// The order-statistic interval of the `q` quantile of `n` independent values covering at least
/// `level` (see the module's doc); `None` when none within the n values does.
pub fn rank_interval(n: usize, q: f64, level: f64) -> Option<RankInterval> {
    if n < 2 || !(0.0 < q && q < 1.0) {
        return None;
    }
    let n64 = n as u64;
    let mode = (((n64 + 1) as f64 * q).floor() as u64).min(n64);
    // B in [lo, hi]: the interval is [X_(lo), X_(hi + 1)], needing lo ≥ 1 and hi + 1 ≤ n.
    let (mut lo, mut hi) = (mode, mode);
    let mut mass = binomial_pmf(n64, q, mode);
    while mass < level {
        let below = (lo > 0).then(|| binomial_pmf(n64, q, lo - 1));
        let above = (hi < n64).then(|| binomial_pmf(n64, q, hi + 1));
        match (below, above) {
            (Some(b), Some(a)) if b >= a => {
                lo -= 1;
                mass += b;
            }
            (_, Some(a)) => {
                hi += 1;
                mass += a;
            }
            (Some(b), None) => {
                lo -= 1;
                mass += b;
            }
            (None, None) => return None,
        }
    }
    (lo >= 1 && hi < n64).then_some(RankInterval {
        low: lo as usize,
        high: hi as usize + 1,
        coverage: mass.min(1.0),
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
    /// The median's order-statistic interval; `None` for one value. (Over sessions,
    /// [`super::sessions::summary_by_session`]: the interval over sessions.)
    pub ci: Option<Interval>,
    /// Sessions the values came from: 1 for values of one session, whose interval is within
    /// that session.
    pub sessions: usize,
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
            sessions: 1,
        })
    }

    /// Whether the median's interval covers 95% and lies within `± precision × median`: the
    /// criterion of a profile's `precision`.
    pub fn within(&self, precision: f64) -> bool {
        self.ci.is_some_and(|ci| ci.within(self.median, precision))
    }
}

#[cfg(test)]
mod tests;
