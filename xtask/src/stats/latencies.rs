//! Latencies kept in an HDR histogram ([`Latencies`]: microseconds, 3 significant digits, so
//! every value is kept within 0.1%), and their percentiles: the nearest-rank order statistic
//! `X_(⌈q·n⌉)` with the order-statistic interval of the q-quantile ([`super::order`]).
//!
//! **Ratios of percentiles** of two independent runs (covering ÷ key index, reuse ÷ per call)
//! divide the two intervals, each taken at √95% ([`super::ratio`]): both hold together with
//! probability at least the product of their coverages.

use hdrhistogram::Histogram;

use super::Interval;
use super::order::{nearest_rank, rank_interval};
use super::ratio::each_of_two;

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

    /// Latencies kept in `histogram` (one read back from its serialization): its values are µs.
    pub fn from_histogram(histogram: Histogram<u64>) -> Self {
        Latencies { histogram }
    }

    /// The histogram itself, to serialize.
    pub fn histogram(&self) -> &Histogram<u64> {
        &self.histogram
    }

    /// Adds every value of `other`, exactly (HdrHistogram's own addition: the counts of equal
    /// buckets summed).
    pub fn add(&mut self, other: &Latencies) -> Result<(), hdrhistogram::AdditionError> {
        self.histogram.add(&other.histogram)
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
        let ci = rank_interval(n, q, level).map(|r| r.values(|rank| self.at_rank(rank)));
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
pub fn percentile_ratio(a: &Latencies, b: &Latencies, q: f64) -> Option<(f64, Option<Interval>)> {
    let level = each_of_two();
    let (top, bottom) = (a.percentile(q, level)?, b.percentile(q, level)?);
    if bottom.ms <= 0.0 {
        return None;
    }
    let ci = match (top.ci, bottom.ci) {
        (Some(x), Some(y)) => x.divided_by(y),
        _ => None,
    };
    Some((top.ms / bottom.ms, ci))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let (r, ci) = percentile_ratio(&half, &l, 0.5).unwrap();
        assert!((r - 0.5).abs() < 0.01, "{r}");
        let ci = ci.unwrap();
        assert!(ci.low < 0.5 && ci.high > 0.5, "{ci:?}");
    }
}
