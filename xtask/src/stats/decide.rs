//! The evidence a decision rests on: a ratio (runner-up ÷ fastest, or any strategy ÷ the
//! fastest) estimated over independent units (a run's sessions, or replicate runs with sessions
//! nested in each), its 95% and 90% intervals, the p-value of "no difference" and of two
//! one-sided tests against ±10%, and how many units a decision would need at the spread seen.
//! Pure maths; the verdicts that read it are the decision map's.
//!
//! Over one run the units are its sessions ([`super::sessions::over_sessions`]); over a
//! replicate set they are the runs, each the geometric mean of its sessions
//! ([`super::runs::over_runs`]), so the t test has R − 1 degrees of freedom. Within a single
//! session the units are the repeats' paired ratios, which another session may not repeat: the
//! reports say so.

use std::collections::BTreeMap;

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::power::{POWER, detectable};
use super::runs::{Schedules, over_runs_scheduled};
use super::sessions::over_sessions;
use super::{CONFIDENCE, Interval, Method};

/// The margin two one-sided tests call equivalent (a factor: ±10%).
pub const EQUIVALENCE_MARGIN: f64 = 1.10;

/// The most units [`Evidence::needed`] looks for; past it a decision is called out of reach.
pub const MOST_UNITS: usize = 200;

/// What one unit of the evidence is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Repeats inside one session.
    Repeats,
    /// Sessions of one run.
    Sessions,
    /// Replicate runs (their sessions nested in each).
    Runs,
}

impl Unit {
    /// The unit's plural name.
    pub fn plural(self) -> &'static str {
        match self {
            Unit::Repeats => "repeats",
            Unit::Sessions => "sessions",
            Unit::Runs => "runs",
        }
    }
}

/// How the units' logarithms spread: their standard deviation, the standard error of their
/// mean and its degrees of freedom (R − 1 over units alike, fewer with a shared schedule's term).
#[derive(Debug, Clone, Copy)]
struct Spread {
    log_sd: f64,
    log_se: f64,
    df: f64,
}

/// A ratio estimated over units, with what tests of it show.
#[derive(Debug, Clone, PartialEq)]
pub struct Evidence {
    /// The geometric mean of the units' values.
    pub center: f64,
    /// Its 95% interval; `None` with fewer than two units.
    pub ci95: Option<Interval>,
    /// Its 90% interval, the one two one-sided tests at 5% each read.
    pub ci90: Option<Interval>,
    /// The two-sided p-value of "the ratio is 1" (t on the logs).
    pub p_differ: Option<f64>,
    /// The p-value of two one-sided tests that the ratio lies within ±10%: the larger of the two.
    pub p_equivalent: Option<f64>,
    /// The standard deviation of the units' logarithms.
    pub log_sd: f64,
    /// How many units.
    pub units: usize,
    /// What a unit is.
    pub unit: Unit,
}

impl Evidence {
    /// Over one value per unit (sessions, or the paired ratios of one session's repeats).
    pub fn of_values(values: &[f64], unit: Unit) -> Option<Evidence> {
        let o95 = over_sessions(values, CONFIDENCE)?;
        let o90 = over_sessions(values, 0.90)?;
        let method = match unit {
            Unit::Repeats => Method::OrderStatistic,
            _ => Method::BetweenSessions,
        };
        let relabel = |ci: Interval| Interval { method, ..ci };
        let n = o95.sessions;
        Some(Self::tested(
            o95.center,
            o95.interval.map(relabel),
            o90.interval.map(relabel),
            Spread {
                log_sd: o95.log_sd,
                log_se: o95.log_sd / (n as f64).sqrt(),
                df: n.saturating_sub(1) as f64,
            },
            n,
            unit,
        ))
    }

    /// Over replicate runs, each its sessions' values by session, with the runs that replayed
    /// one schedule: t over the runs' geometric means, with a shared schedule's term
    /// ([`over_runs_scheduled`]). The spread a decision's [`Evidence::needed`] scales is one
    /// run's as a run with an order of its own varies: more runs of a shared order would not
    /// average its places' effects down.
    pub fn of_runs(runs: &[BTreeMap<usize, f64>], schedules: &Schedules) -> Option<Evidence> {
        let o95 = over_runs_scheduled(runs, schedules, CONFIDENCE)?;
        let o90 = over_runs_scheduled(runs, schedules, 0.90)?;
        let units = o95.runs();
        Some(Self::tested(
            o95.center,
            o95.interval,
            o90.interval,
            Spread {
                log_sd: o95.own_schedule_run_sd,
                log_se: o95.log_se,
                df: o95.df,
            },
            units,
            Unit::Runs,
        ))
    }

    fn tested(
        center: f64,
        ci95: Option<Interval>,
        ci90: Option<Interval>,
        spread: Spread,
        units: usize,
        unit: Unit,
    ) -> Evidence {
        let Spread { log_sd, log_se, df } = spread;
        let (p_differ, p_equivalent) = if units < 2 {
            (None, None)
        } else {
            let log = center.ln();
            let se = log_se;
            let bound = EQUIVALENCE_MARGIN.ln();
            if se == 0.0 {
                let differ = if log == 0.0 { 1.0 } else { 0.0 };
                let equivalent = if log.abs() < bound { 0.0 } else { 1.0 };
                (Some(differ), Some(equivalent))
            } else {
                let t = StudentsT::new(0.0, 1.0, df).expect("two or more units");
                let differ = 2.0 * (1.0 - t.cdf((log / se).abs()));
                // H0: ratio ≤ 1/1.10 (rejected when the log lies well above −bound), and
                // H0: ratio ≥ 1.10 (rejected when it lies well below +bound).
                let lower = 1.0 - t.cdf((log + bound) / se);
                let upper = t.cdf((log - bound) / se);
                (Some(differ), Some(lower.max(upper)))
            }
        };
        Evidence {
            center,
            ci95,
            ci90,
            p_differ,
            p_equivalent,
            log_sd,
            units,
            unit,
        }
    }

    /// The units (of the same kind) a decision would need at the spread seen, with 80% power:
    /// the fewest n at which either the observed ratio would be detected as a difference at 5%,
    /// or two one-sided tests at 5% each would show it within ±10%. `None` when no spread was
    /// seen or past [`MOST_UNITS`].
    pub fn needed(&self) -> Option<usize> {
        if self.units < 2 || self.log_sd == 0.0 {
            return None;
        }
        let effect = self.center.max(1.0 / self.center);
        (2..=MOST_UNITS).find(|&n| {
            let se = self.log_sd / (n as f64).sqrt();
            let df = (n - 1) as f64;
            let differs = detectable(se, df, 0.05, POWER) <= effect;
            let equivalent = detectable(se, df, 0.10, POWER) <= EQUIVALENCE_MARGIN / effect;
            differs || equivalent
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clear_ratio_differs_and_a_tight_one_near_1_is_equivalent() {
        let clear = Evidence::of_values(&[1.5, 1.6, 1.55, 1.52, 1.58], Unit::Sessions).unwrap();
        assert!(clear.p_differ.unwrap() < 0.001, "{clear:?}");
        assert!(clear.p_equivalent.unwrap() > 0.5);
        let tight = Evidence::of_values(&[1.01, 0.99, 1.02, 1.0, 1.03], Unit::Sessions).unwrap();
        assert!(tight.p_equivalent.unwrap() < 0.01, "{tight:?}");
        assert!(tight.p_differ.unwrap() > 0.05);
    }

    #[test]
    fn a_wide_ratio_needs_more_units_than_it_has() {
        let wide = Evidence::of_values(&[0.8, 1.4, 1.1, 0.9, 1.3], Unit::Sessions).unwrap();
        let needed = wide.needed().unwrap();
        assert!(needed > 5, "{needed}");
    }

    #[test]
    fn over_runs_the_units_are_the_runs() {
        let keyed = |v: [f64; 2]| v.into_iter().enumerate().collect::<BTreeMap<usize, f64>>();
        let runs = [keyed([1.2, 1.25]), keyed([1.3, 1.28]), keyed([1.22, 1.24])];
        let e = Evidence::of_runs(&runs, &Schedules::default()).unwrap();
        assert_eq!((e.units, e.unit), (3, Unit::Runs));
        assert_eq!(e.ci95.unwrap().method, Method::BetweenRuns);
        assert!(e.p_differ.unwrap() < 0.05);
    }
}
