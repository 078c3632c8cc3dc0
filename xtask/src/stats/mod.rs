//! Statistics over measurements, pure maths with no I/O: medians and quantiles, and every
//! interval d1bench reports, each written once — the order-statistic interval of a median or
//! of any quantile ([`order`]), the interval of a ratio of two independent estimates
//! ([`ratio`]), the Wilson interval of a proportion ([`share`]), the t interval over sessions and
//! the comparison of two runs' sessions with its multiplicity correction ([`sessions`]), the
//! ratio of two arms over time blocks under correlation ([`batch_means`]) — when a series has
//! settled after its start ([`settling`]), the A/A test of a judgement over sessions by halves
//! ([`halves`]), the two-level estimate over replicate runs ([`runs`]), a change between runs
//! adjusted for the hosts' speed and the variance between runs ([`adjust`]), the evidence a
//! decision rests on, over sessions or runs ([`decide`]), and the HDR histogram that latencies
//! are kept in ([`latencies`]).
//!
//! Nothing here knows records, reports, targets or the command line: the pipeline and every
//! report hand it numbers and get numbers back.
//!
//! No interval here is drawn at random, so a CSV always gives the same intervals.

pub mod adjust;
pub mod batch_means;
pub mod decide;
pub mod halves;
pub mod latencies;
pub mod order;
pub mod power;
pub mod ratio;
pub mod runs;
pub mod sessions;
pub mod settling;
pub mod share;

pub use latencies::Latencies;
pub use order::{Summary, median, nearest_rank};
pub use ratio::{Ratio, ratio_of_medians};
pub use share::Share;

/// Coverage the confidence intervals aim at.
pub const CONFIDENCE: f64 = 0.95;

/// How an interval was obtained: a column of `summary.csv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// The order-statistic interval of a median or a quantile (of values, or of paired ratios).
    OrderStatistic,
    /// The ratio of two independent estimates' order-statistic intervals at √95% each.
    IndependentRatio,
    /// Student's t over the logarithms of the sessions' values ([`sessions`]).
    BetweenSessions,
    /// Student's t over the logarithms of time blocks' values ([`batch_means`]).
    BatchMeans,
    /// Student's t over the logarithms of replicate runs' values ([`runs`]).
    BetweenRuns,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::OrderStatistic => "order-statistic",
            Method::IndependentRatio => "independent-ratio",
            Method::BetweenSessions => "between-sessions",
            Method::BatchMeans => "batch-means",
            Method::BetweenRuns => "between-runs",
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
