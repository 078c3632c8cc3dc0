//! The interval of a ratio of two independent estimates (a target's median and its baseline's,
//! a percentile of one workload and of another): each estimate's order-statistic interval taken
//! at √95% ≈ 97.5%, divided.
//!
//! Two strategies at one point ran next to each other in every repeat (a profile's strategies
//! interleave within each repeat), so their repeats are pairs: their ratio is summarized by the
//! median of the per-repeat ratios with the same order-statistic interval
//! ([`super::Summary::of`] over the ratios), exact for pairs as it is for single values, and
//! the pairing cancels what drifts between repeats. A target and its baseline ran apart (the
//! baseline after the whole target), so they are not pairs: their ratio is the ratio of the two
//! medians, and its interval ([`ratio_of_medians`]) divides the two medians' intervals. The
//! samples are independent, so both intervals hold together with probability at least the
//! product of their coverages, and then the ratio of the true values lies in `[low_a / high_b,
//! high_a / low_b]`: that product is reported, as a lower bound ([`Interval::divided_by`]). A
//! bootstrap of either ratio would need more repeats than a run takes to be trusted at 95%.

use super::order::{median, median_interval};
use super::{CONFIDENCE, Interval, Method};

/// The level each of two independent intervals is taken at so that both hold together with
/// probability at least [`CONFIDENCE`].
pub fn each_of_two() -> f64 {
    CONFIDENCE.sqrt()
}

impl Interval {
    /// The interval of `a ÷ b` from the intervals `self` of `a` and `divisor` of `b`, two
    /// independent estimates: `[low_a / high_b, high_a / low_b]`, covering at least the product
    /// of their coverages; `None` when the divisor's interval reaches 0.
    pub fn divided_by(self, divisor: Interval) -> Option<Interval> {
        (divisor.low > 0.0).then(|| Interval {
            low: self.low / divisor.high,
            high: self.high / divisor.low,
            coverage: self.coverage * divisor.coverage,
            method: Method::IndependentRatio,
        })
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
    ratio_of_medians_at(numerator, denominator, each_of_two())
}

/// [`ratio_of_medians`] with each median's interval at `level` (√ of a Bonferroni share of
/// [`CONFIDENCE`], when several ratios are read together).
pub fn ratio_of_medians_at(numerator: &[f64], denominator: &[f64], level: f64) -> Option<Ratio> {
    let (top, bottom) = (median(numerator)?, median(denominator)?);
    if bottom <= 0.0 {
        return None;
    }
    let ci = match (
        median_interval(numerator, level),
        median_interval(denominator, level),
    ) {
        (Some(a), Some(b)) => a.divided_by(b),
        _ => None,
    };
    Some(Ratio {
        value: top / bottom,
        n: (numerator.len(), denominator.len()),
        ci,
    })
}

/// A difference of two independent samples' medians with its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Difference {
    pub value: f64,
    /// `[low_a − high_b, high_a − low_b]` from each median's interval at the level asked;
    /// `None` when a sample is too small for one.
    pub ci: Option<(f64, f64)>,
    /// The product of the two intervals' coverages: the least probability both hold.
    pub coverage: f64,
}

/// `median(a) − median(b)` for independent samples, each median's interval at `level`; `None`
/// when a sample is empty.
pub fn difference_of_medians_at(a: &[f64], b: &[f64], level: f64) -> Option<Difference> {
    let value = median(a)? - median(b)?;
    Some(
        match (median_interval(a, level), median_interval(b, level)) {
            (Some(x), Some(y)) => Difference {
                value,
                ci: Some((x.low - y.high, x.high - y.low)),
                coverage: x.coverage * y.coverage,
            },
            _ => Difference {
                value,
                ci: None,
                coverage: 0.0,
            },
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_difference_of_medians_subtracts_the_intervals_crosswise() {
        let a: Vec<f64> = (1..=50).map(|i| 10.0 + i as f64 / 10.0).collect();
        let b: Vec<f64> = (1..=50).map(|i| 4.0 + i as f64 / 10.0).collect();
        let d = difference_of_medians_at(&a, &b, each_of_two()).unwrap();
        assert!((d.value - 6.0).abs() < 1e-9, "{d:?}");
        let (low, high) = d.ci.unwrap();
        let (x, y) = (
            median_interval(&a, each_of_two()).unwrap(),
            median_interval(&b, each_of_two()).unwrap(),
        );
        assert_eq!((low, high), (x.low - y.high, x.high - y.low));
        assert!(low < 6.0 && 6.0 < high);
        assert!(d.coverage >= CONFIDENCE);
        assert!(difference_of_medians_at(&[], &b, 0.9).is_none());
        assert_eq!(
            difference_of_medians_at(&[1.0], &[0.5], 0.9).unwrap().ci,
            None
        );
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
