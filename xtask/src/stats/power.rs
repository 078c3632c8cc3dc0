//! What a comparison over sessions could detect, and what shows two things equivalent: the
//! smallest change a t test on the logs catches with a given power ([`detectable`], for a run
//! against a replicate of its design [`detectable_by_replicate`], or read back from an interval
//! over sessions [`detectable_from_interval`]), and two one-sided tests against ±5% and ±10%
//! ([`Equivalence`]). Pure maths; the simulations that check them at the committed runs' noise
//! are in [`super::sessions`]' tests.

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::sessions::{FALSE_DISCOVERY_RATE, change_between, t_quantile};
use super::{Interval, Method};

/// What two one-sided tests (TOST, each at 5%: the 90% interval of `after ÷ before` from
/// Welch's t on the logs) show of a ratio's equivalence to 1, at the two margins d1bench asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Equivalence {
    /// The 90% interval lies within 1 ÷ 1.05 to 1.05.
    WithinFive,
    /// Within 1 ÷ 1.10 to 1.10, not within ±5%.
    WithinTen,
    /// Not within ±10%: the run cannot tell a 10% difference from none (or shows one).
    NotShown,
}

impl Equivalence {
    /// The margins, as factors.
    pub const MARGINS: [f64; 2] = [1.05, 1.10];

    /// `after ÷ before` judged by two one-sided tests; `None` unless both have two sessions.
    pub fn of(before: &[f64], after: &[f64]) -> Option<Equivalence> {
        let ci = change_between(before, after, 1.0 - 2.0 * FALSE_DISCOVERY_RATE)?.interval;
        Some(Self::of_interval(ci))
    }

    /// A ratio judged by its 90% interval (two one-sided tests at 5% each), however it was
    /// taken (over sessions, over time blocks).
    pub fn of_interval(ci: Interval) -> Equivalence {
        let within = |m: f64| ci.low >= 1.0 / m && ci.high <= m;
        match () {
            _ if within(Self::MARGINS[0]) => Equivalence::WithinFive,
            _ if within(Self::MARGINS[1]) => Equivalence::WithinTen,
            _ => Equivalence::NotShown,
        }
    }

    pub fn text(self) -> &'static str {
        match self {
            Equivalence::WithinFive => "within ±5%",
            Equivalence::WithinTen => "within ±10%",
            Equivalence::NotShown => "not shown",
        }
    }
}

/// The power at which d1bench states what a comparison could have detected.
pub const POWER: f64 = 0.8;

/// The smallest change (a factor: 1.20 = 20%) that a two-sided t test at level `alpha` on the
/// logs detects with probability `power`, when the difference of log means has standard error
/// `se` and `df` degrees of freedom: `exp((t(1 − α/2) + t(power)) · se)`, the usual normal-shift
/// approximation with Student's quantiles (it leaves out the noncentral t's extra spread, under
/// a point of power at the sessions d1bench runs). Infinite with no degrees of freedom.
pub fn detectable(se: f64, df: f64, alpha: f64, power: f64) -> f64 {
    if !(df > 0.0 && se.is_finite()) {
        return f64::INFINITY;
    }
    let t = StudentsT::new(0.0, 1.0, df).expect("positive degrees of freedom");
    ((t.inverse_cdf(1.0 - alpha / 2.0) + t.inverse_cdf(power)) * se).exp()
}

/// [`detectable_by_replicate`] at level `alpha` of an estimate over `sessions` sessions, from its `center` and
/// its interval over sessions at [`CONFIDENCE`] (Student's t on the logs, whose half-width gives
/// the sessions' spread back); `None` for any other interval (within one session, or the linear
/// one of values that cannot be logged, which is not symmetric on the log scale).
pub fn detectable_from_interval(
    center: f64,
    ci: Interval,
    sessions: usize,
    alpha: f64,
) -> Option<f64> {
    if sessions < 2 || ci.method != Method::BetweenSessions || ci.low <= 0.0 || center <= 0.0 {
        return None;
    }
    let (low, high) = (ci.low.ln(), ci.high.ln());
    if ((low + high) / 2.0 - center.ln()).abs() > 1e-9 * center.ln().abs().max(1.0) {
        return None;
    }
    let n = sessions as f64;
    let log_sd = (high - low) / 2.0 * n.sqrt() / t_quantile(n - 1.0, ci.coverage);
    Some(detectable_by_replicate(log_sd, sessions, alpha))
}

/// What a comparison of a run with a replicate of the same design could detect at one point:
/// [`detectable`] for two runs of `sessions` sessions each whose sessions' logs spread by
/// `log_sd`, at level `alpha`.
pub fn detectable_by_replicate(log_sd: f64, sessions: usize, alpha: f64) -> f64 {
    let n = sessions as f64;
    detectable(log_sd * (2.0 / n).sqrt(), 2.0 * (n - 1.0), alpha, POWER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_is_equivalent_within_the_margin_it_lies_in() {
        let ci = |low: f64, high: f64| Interval {
            low,
            high,
            coverage: 0.90,
            method: Method::BatchMeans,
        };
        assert_eq!(
            Equivalence::of_interval(ci(0.97, 1.04)),
            Equivalence::WithinFive
        );
        assert_eq!(
            Equivalence::of_interval(ci(0.94, 1.04)),
            Equivalence::WithinTen
        );
        assert_eq!(
            Equivalence::of_interval(ci(0.97, 1.11)),
            Equivalence::NotShown
        );
        // The margins are factors: 1 ÷ 1.05 is inside ±5%, 0.95 is not.
        assert_eq!(
            Equivalence::of_interval(ci(1.0 / 1.05, 1.05)),
            Equivalence::WithinFive
        );
        assert_eq!(
            Equivalence::of_interval(ci(0.95, 1.0)),
            Equivalence::WithinTen
        );
    }
}
