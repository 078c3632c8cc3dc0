//! Latency percentiles with intervals: pure maths, no I/O. Latencies go into an HDR histogram
//! ([`Latencies`]: microseconds, 3 significant digits, so every value is kept within 0.1%); a
//! percentile is the nearest-rank order statistic `X_(⌈q·n⌉)`, and its interval the
//! distribution-free order-statistic interval, the median interval of [`super::stats`]
//! generalised to any quantile.
//!
//! **The interval of the q-quantile.** With `B ~ Binomial(n, q)` the number of the n latencies
//! below the true quantile `ξ_q`, `P(X_(j) ≤ ξ_q < X_(k)) = P(j ≤ B ≤ k − 1)`. [`rank_interval`]
//! starts at B's mode and widens `[j, k − 1]` one rank at a time towards the more probable
//! side until the mass reaches the level asked (95%), so the ranks are the narrowest such pair
//! that this greedy walk finds, and their exact coverage is reported. It assumes only
//! independent latencies of one distribution; requests of one open-loop run queue behind one
//! another, so neighbouring latencies are correlated and the coverage is optimistic there (the
//! summary says so). When no pair reaches the level within the n values (p99.9 needs a few
//! thousand requests), there is no interval, and the summary says the n was too small.
//!
//! **Ratios of percentiles** of two independent runs (covering ÷ key index, reuse ÷ per call)
//! divide the two intervals, each taken at √95%, as [`super::stats::ratio_of_medians`] does:
//! both hold together with probability at least the product of their coverages.

use hdrhistogram::Histogram;

use super::stats::{CONFIDENCE, Interval, Method};

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

/// The ranks (from 1) of an order-statistic interval `[X_(low), X_(high)]` of a quantile, and
/// what it covers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankInterval {
    pub low: usize,
    pub high: usize,
    pub coverage: f64,
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

/// The rank (from 1) of the nearest-rank `q` quantile of `n` values: `⌈q·n⌉`.
pub fn nearest_rank(n: usize, q: f64) -> usize {
    ((q * n as f64).ceil() as usize).clamp(1, n.max(1))
}

/// Latencies of one operation at one point, in an HDR histogram of microseconds.
pub struct Latencies {
    histogram: Histogram<u64>,
}

/// A percentile and its interval, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Percentile {
    pub q: f64,
    pub ms: f64,
    /// `None` when the values are too few for an interval at the level asked.
    pub ci: Option<Interval>,
}

impl Latencies {
    pub fn new() -> Self {
        Latencies {
            // 1 µs to one hour, 3 significant digits.
            histogram: Histogram::new_with_bounds(1, 3_600_000_000, 3)
                .expect("the bounds are valid"),
        }
    }

    pub fn record_ms(&mut self, ms: f64) {
        let us = (ms * 1000.0).round().clamp(1.0, 3_600_000_000.0) as u64;
        self.histogram.saturating_record(us);
    }

    pub fn len(&self) -> usize {
        self.histogram.len() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.histogram.is_empty()
    }

    /// The value of rank `r` (from 1), in ms, as the histogram holds it (its bucket's highest
    /// equivalent value, within 0.1%).
    pub fn at_rank(&self, r: usize) -> f64 {
        let mut seen = 0u64;
        for v in self.histogram.iter_recorded() {
            seen += v.count_at_value();
            if seen >= r as u64 {
                return self.histogram.highest_equivalent(v.value_iterated_to()) as f64 / 1000.0;
            }
        }
        self.max_ms()
    }

    pub fn max_ms(&self) -> f64 {
        self.histogram.max() as f64 / 1000.0
    }

    /// The `q` percentile with its order-statistic interval at `level`.
    pub fn percentile(&self, q: f64, level: f64) -> Option<Percentile> {
        let n = self.len();
        if n == 0 {
            return None;
        }
        let ci = rank_interval(n, q, level).map(|r| Interval {
            low: self.at_rank(r.low),
            high: self.at_rank(r.high),
            coverage: r.coverage,
            method: Method::OrderStatistic,
        });
        Some(Percentile {
            q,
            ms: self.at_rank(nearest_rank(n, q)),
            ci,
        })
    }
}

impl Default for Latencies {
    fn default() -> Self {
        Latencies::new()
    }
}

/// `percentile_q(a) ÷ percentile_q(b)` of two independent sets of latencies, with each interval
/// taken at √95% and divided; the interval is `None` when either has too few values.
pub fn ratio(a: &Latencies, b: &Latencies, q: f64) -> Option<(f64, Option<Interval>)> {
    let level = CONFIDENCE.sqrt();
    let (top, bottom) = (a.percentile(q, level)?, b.percentile(q, level)?);
    if bottom.ms <= 0.0 {
        return None;
    }
    let ci = match (top.ci, bottom.ci) {
        (Some(x), Some(y)) if y.low > 0.0 => Some(Interval {
            low: x.low / y.high,
            high: x.high / y.low,
            coverage: x.coverage * y.coverage,
            method: Method::IndependentRatio,
        }),
        _ => None,
    };
    Some((top.ms / bottom.ms, ci))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reports::stats::{self, order_statistic_coverage};

    #[test]
    fn the_median_interval_is_the_sign_test_interval() {
        // At q = ½ the walk widens symmetrically, give or take the one rank where the level
        // is reached: it is stats.rs's median interval, or one rank narrower on one side.
        for n in [6, 10, 20, 51, 200, 999] {
            let r = rank_interval(n, 0.5, 0.95).unwrap();
            assert!(r.coverage >= 0.95, "n={n}: {r:?}");
            let symmetric =
                stats::median_interval(&(1..=n).map(|i| i as f64).collect::<Vec<_>>(), 0.95)
                    .unwrap();
            let (j, k) = (symmetric.low as usize, symmetric.high as usize);
            assert!(
                r.low >= j && r.high <= k && (r.high - r.low) + 1 >= k - j,
                "n={n}: {r:?} vs [{j}, {k}]"
            );
            if r.low + r.high == n + 1 {
                let exact = order_statistic_coverage(n, r.low);
                assert!((r.coverage - exact).abs() < 1e-9, "n={n}: {r:?} vs {exact}");
            }
        }
        assert_eq!(rank_interval(5, 0.5, 0.95), None);
    }

    /// The coverage claimed is the coverage had: 20,000 samples of 300 uniform values, the
    /// p90's interval holds the true 0.9 in about as many as it claims (seeded, so the test
    /// always sees the same draws).
    #[test]
    fn the_p90_interval_covers_what_it_says() {
        let (n, q) = (300, 0.9);
        let r = rank_interval(n, q, 0.95).unwrap();
        assert!(r.coverage >= 0.95 && r.coverage < 0.97, "{r:?}");
        let mut rng = fastrand::Rng::with_seed(7);
        let trials = 20_000;
        let mut held = 0;
        for _ in 0..trials {
            let mut v: Vec<f64> = (0..n).map(|_| rng.f64()).collect();
            v.sort_by(f64::total_cmp);
            held += usize::from(v[r.low - 1] <= q && q < v[r.high - 1]);
        }
        let seen = held as f64 / trials as f64;
        assert!((seen - r.coverage).abs() < 0.01, "{seen} vs {}", r.coverage);
    }

    #[test]
    fn high_percentiles_need_enough_values() {
        assert_eq!(rank_interval(500, 0.999, 0.95), None);
        let r = rank_interval(5_000, 0.999, 0.95).unwrap();
        assert!(
            r.high <= 5_000 && r.low < 4_995 && r.coverage >= 0.95,
            "{r:?}"
        );
        assert_eq!(nearest_rank(1000, 0.999), 999);
        assert_eq!(nearest_rank(1, 0.5), 1);
    }

    #[test]
    fn percentiles_come_from_the_histogram_within_its_precision() {
        let mut l = Latencies::new();
        for i in 1..=1000 {
            l.record_ms(i as f64);
        }
        let p50 = l.percentile(0.5, 0.95).unwrap();
        assert!((p50.ms - 500.0).abs() <= 0.5, "{p50:?}");
        let ci = p50.ci.unwrap();
        assert!(
            ci.low < 500.0 && ci.high > 500.0 && ci.high - ci.low < 80.0,
            "{ci:?}"
        );
        assert!((l.percentile(0.99, 0.95).unwrap().ms - 990.0).abs() <= 1.0);
        assert!((l.max_ms() - 1000.0).abs() <= 1.0);
        let mut half = Latencies::new();
        for i in 1..=1000 {
            half.record_ms(i as f64 / 2.0);
        }
        let (r, ci) = ratio(&half, &l, 0.5).unwrap();
        assert!((r - 0.5).abs() < 0.01, "{r}");
        let ci = ci.unwrap();
        assert!(ci.low < 0.5 && ci.high > 0.5, "{ci:?}");
    }
}
