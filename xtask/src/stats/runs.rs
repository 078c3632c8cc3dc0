//! Estimates whose unit is the run: sessions nested in replicate runs made at separate times.
//! A run's sessions show the spread inside that run and nothing of what moves between runs (the
//! machine's day, its other load, the build's layout), so a finding meant to hold tomorrow takes
//! its interval over runs.
//!
//! The method, named in the reference as "between runs (t on logs)", the two-level form of
//! [`super::sessions`]:
//! - each run gives one value per point: the geometric mean of its sessions' values (the mean of
//!   their logarithms);
//! - over R runs the estimate is the geometric mean of the runs' values, its interval Student's t
//!   with R − 1 degrees of freedom over the runs' log means (valid however the variance splits
//!   between and within runs, since each run mean carries both);
//! - the variance is split by one-way random effects (the method of moments, ANOVA's): within
//!   runs, the sessions' pooled variance of logs `s_w²`; between runs, `σ_b² = max(0, s_m² −
//!   s_w² / ñ)`, where `s_m²` is the variance of the runs' log means and ñ the harmonic mean of
//!   their session counts. The between-run share `σ_b² / (σ_b² + s_w²)` says how much of the
//!   spread a single run's sessions cannot see;
//! - [`OverRuns::held_in`] counts the runs whose own interval over sessions excludes 1 on the
//!   side of the whole: in how many runs the finding held on its own.
//!
//! Checked by simulation below: coverage near nominal with a run effect twice the sessions' noise,
//! where the interval that pools every session as independent covers far less.

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::sessions::{change_between, over_sessions, t_quantile};
use super::{Interval, Method};

/// An estimate over replicate runs.
#[derive(Debug, Clone, PartialEq)]
pub struct OverRuns {
    /// The geometric mean of the runs' values (each the geometric mean of its sessions').
    pub center: f64,
    /// Its interval at the level asked for, t over the runs; `None` with fewer than two runs.
    pub interval: Option<Interval>,
    /// Each run's value, in the order given.
    pub per_run: Vec<f64>,
    /// Each run's own interval over its sessions at the level asked for (`None` with fewer
    /// than two sessions in it).
    pub per_run_interval: Vec<Option<Interval>>,
    /// The standard deviation of the sessions' logs within runs, pooled (a share: 0.05 ≈ 5%).
    pub within_sd: f64,
    /// The standard deviation between runs beyond what the sessions explain, `σ_b` (a share).
    pub between_sd: f64,
    /// The standard error of the centre's logarithm over runs (`s_m ÷ √R`; 0 with one run).
    pub log_se: f64,
}

impl OverRuns {
    /// How many runs gave a value.
    pub fn runs(&self) -> usize {
        self.per_run.len()
    }

    /// The share of the variance (of one session's log value) that lies between runs:
    /// `σ_b² / (σ_b² + s_w²)`, 0 when nothing varies.
    pub fn between_share(&self) -> f64 {
        let (b, w) = (self.between_sd.powi(2), self.within_sd.powi(2));
        if b + w == 0.0 { 0.0 } else { b / (b + w) }
    }

    /// How many runs' own intervals lie wholly on the side of 1 where the whole's centre lies
    /// (a finding that "held" in that run alone); a centre of exactly 1 holds in none.
    pub fn held_in(&self) -> usize {
        let above = self.center > 1.0;
        let below = self.center < 1.0;
        self.per_run_interval
            .iter()
            .flatten()
            .filter(|ci| (above && ci.low > 1.0) || (below && ci.high < 1.0))
            .count()
    }

    /// The two-sided p-value of "the ratio is 1", Student's t over the runs' logs with R − 1
    /// degrees of freedom; `None` with fewer than two runs. Runs that agree exactly give 0 for
    /// any ratio but 1, and 1 for 1.
    pub fn p_value_of_one(&self) -> Option<f64> {
        let r = self.runs();
        if r < 2 {
            return None;
        }
        let log = self.center.ln();
        if self.log_se == 0.0 {
            return Some(if log == 0.0 { 1.0 } else { 0.0 });
        }
        let t = StudentsT::new(0.0, 1.0, (r - 1) as f64).expect("two or more runs");
        Some(2.0 * (1.0 - t.cdf((log / self.log_se).abs())))
    }

    /// The p-value of two one-sided tests that the ratio lies within `1 ÷ margin` to `margin`
    /// (`margin` a factor: 1.10 = ±10%), Student's t over the runs' logs with R − 1 degrees of
    /// freedom: the larger of the two one-sided p-values. Small when the runs show the ratio
    /// equivalent to 1 within the margin; `None` with fewer than two runs. Runs that agree
    /// exactly give 0 inside the margin and 1 outside.
    pub fn equivalence_p_value(&self, margin: f64) -> Option<f64> {
        let r = self.runs();
        if r < 2 {
            return None;
        }
        let (log, delta) = (self.center.ln(), margin.ln());
        if self.log_se == 0.0 {
            return Some(if log.abs() < delta { 0.0 } else { 1.0 });
        }
        let t = StudentsT::new(0.0, 1.0, (r - 1) as f64).expect("two or more runs");
        let lower = 1.0 - t.cdf((log + delta) / self.log_se);
        let upper = 1.0 - t.cdf((delta - log) / self.log_se);
        Some(lower.max(upper))
    }
}

/// The two-level estimate of `runs` (each run's values, one per session, each positive) at
/// `level`; `None` when no run has a value or any value is not positive. Runs without a value
/// are left out.
pub fn over_runs(runs: &[Vec<f64>], level: f64) -> Option<OverRuns> {
    let runs: Vec<&Vec<f64>> = runs.iter().filter(|r| !r.is_empty()).collect();
    if runs.is_empty() {
        return None;
    }
    let each: Vec<_> = runs
        .iter()
        .map(|r| over_sessions(r, level))
        .collect::<Option<Vec<_>>>()?;
    let logs: Vec<f64> = each.iter().map(|o| o.center.ln()).collect();
    let r = logs.len();
    let mean = logs.iter().sum::<f64>() / r as f64;
    let var_means = if r < 2 {
        0.0
    } else {
        logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (r - 1) as f64
    };
    // Pooled within-run variance of the sessions' logs, weighted by degrees of freedom.
    let (ss, df) = each.iter().fold((0.0, 0usize), |(ss, df), o| {
        let d = o.sessions.saturating_sub(1);
        (ss + o.log_sd.powi(2) * d as f64, df + d)
    });
    let within_var = if df == 0 { 0.0 } else { ss / df as f64 };
    let harmonic_n = r as f64 / each.iter().map(|o| 1.0 / o.sessions as f64).sum::<f64>();
    let between_var = (var_means - within_var / harmonic_n).max(0.0);
    let interval = between_runs_interval(mean, var_means, r, level);
    Some(OverRuns {
        center: mean.exp(),
        interval,
        per_run: each.iter().map(|o| o.center).collect(),
        per_run_interval: each.iter().map(|o| o.interval).collect(),
        within_sd: within_var.sqrt(),
        between_sd: between_var.sqrt(),
        log_se: (var_means / r as f64).sqrt(),
    })
}

/// The two-level estimate of a ratio `after ÷ before` whose two sides are measured in sessions
/// of their own within each run (the Rust Worker's sessions against the JavaScript Worker's):
/// each run's value the ratio of the two sides' geometric means and its interval Welch's t on
/// the logs ([`change_between`]), the estimate over runs t over the runs' log ratios as in
/// [`over_runs`]. Within runs, `s_w²` pools both sides' sessions' variance of logs; a run's log
/// ratio carries `s_w² (1/n_a + 1/n_b)` of it, so between runs `σ_b² = max(0, s_m² − s_w² ·
/// mean(1/n_a + 1/n_b))`: how far the ratio itself moves from run to run. `None` unless some run
/// has two sessions a side with positive values.
pub fn over_runs_of_change(runs: &[(Vec<f64>, Vec<f64>)], level: f64) -> Option<OverRuns> {
    struct Run {
        log_ratio: f64,
        interval: Interval,
        ss: f64,
        df: usize,
        inverse_n: f64,
    }
    let each: Vec<Run> = runs
        .iter()
        .filter_map(|(before, after)| {
            let change = change_between(before, after, level)?;
            let (a, b) = (over_sessions(before, level)?, over_sessions(after, level)?);
            Some(Run {
                log_ratio: change.ratio.ln(),
                interval: change.interval,
                ss: a.log_sd.powi(2) * (a.sessions - 1) as f64
                    + b.log_sd.powi(2) * (b.sessions - 1) as f64,
                df: a.sessions + b.sessions - 2,
                inverse_n: 1.0 / a.sessions as f64 + 1.0 / b.sessions as f64,
            })
        })
        .collect();
    if each.is_empty() {
        return None;
    }
    let r = each.len();
    let mean = each.iter().map(|e| e.log_ratio).sum::<f64>() / r as f64;
    let var_means = if r < 2 {
        0.0
    } else {
        each.iter()
            .map(|e| (e.log_ratio - mean).powi(2))
            .sum::<f64>()
            / (r - 1) as f64
    };
    let df: usize = each.iter().map(|e| e.df).sum();
    let within_var = if df == 0 {
        0.0
    } else {
        each.iter().map(|e| e.ss).sum::<f64>() / df as f64
    };
    let inverse_n = each.iter().map(|e| e.inverse_n).sum::<f64>() / r as f64;
    let between_var = (var_means - within_var * inverse_n).max(0.0);
    Some(OverRuns {
        center: mean.exp(),
        interval: between_runs_interval(mean, var_means, r, level),
        per_run: each.iter().map(|e| e.log_ratio.exp()).collect(),
        per_run_interval: each.iter().map(|e| Some(e.interval)).collect(),
        within_sd: within_var.sqrt(),
        between_sd: between_var.sqrt(),
        log_se: (var_means / r as f64).sqrt(),
    })
}

/// Student's t over `r` runs' log values of mean `mean` and variance `var_means`; `None` with
/// fewer than two.
fn between_runs_interval(mean: f64, var_means: f64, r: usize, level: f64) -> Option<Interval> {
    (r >= 2).then(|| {
        let half = t_quantile((r - 1) as f64, level) * var_means.sqrt() / (r as f64).sqrt();
        Interval {
            low: (mean - half).exp(),
            high: (mean + half).exp(),
            coverage: level,
            method: Method::BetweenRuns,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::CONFIDENCE;

    #[test]
    fn one_run_has_no_interval_and_its_sessions_centre() {
        let o = over_runs(&[vec![2.0, 8.0]], CONFIDENCE).unwrap();
        assert!((o.center - 4.0).abs() < 1e-12);
        assert!(o.interval.is_none());
        assert_eq!(o.runs(), 1);
        assert_eq!(o.between_sd, 0.0);
    }

    #[test]
    fn runs_that_agree_have_no_between_share_and_runs_that_differ_do() {
        let same = over_runs(
            &[vec![1.0, 1.1], vec![1.0, 1.1], vec![1.0, 1.1]],
            CONFIDENCE,
        )
        .unwrap();
        assert_eq!(same.between_sd, 0.0);
        assert_eq!(same.between_share(), 0.0);
        let apart = over_runs(
            &[vec![1.0, 1.01], vec![2.0, 2.02], vec![4.0, 4.04]],
            CONFIDENCE,
        )
        .unwrap();
        assert!(apart.between_share() > 0.99, "{apart:?}");
        let ci = apart.interval.unwrap();
        assert_eq!(ci.method, Method::BetweenRuns);
        assert!(ci.low < 2.0 && ci.high > 2.0);
    }

    #[test]
    fn held_in_counts_the_runs_whose_own_interval_is_on_the_side_of_the_whole() {
        let o = over_runs(
            &[
                vec![0.5, 0.52, 0.51],
                vec![0.6, 0.61, 0.59],
                vec![0.4, 1.6, 0.9],
            ],
            CONFIDENCE,
        )
        .unwrap();
        assert!(o.center < 1.0);
        assert_eq!(o.held_in(), 2);
    }

    #[test]
    fn a_ratio_of_two_sides_over_runs_has_each_runs_welch_interval_and_the_spread_of_the_runs() {
        // Each run: JavaScript's sessions at 1, Rust's at 1.02; runs apart by a common factor.
        let run = |k: f64| {
            (
                vec![k, 1.01 * k, 0.99 * k, k],
                vec![1.02 * k, 1.03 * k, 1.01 * k, 1.02 * k],
            )
        };
        let o = over_runs_of_change(&[run(1.0), run(2.0), run(0.5)], 0.90).unwrap();
        // The common factor cancels in the ratio: nothing between runs.
        assert!((o.center - 1.02).abs() < 1e-3, "{o:?}");
        assert!(o.between_share() < 0.01, "{o:?}");
        assert_eq!(o.per_run_interval.iter().flatten().count(), 3);
        assert_eq!(o.held_in(), 3);
        // Equivalent within ±5% and ±10%, not within ±1%.
        assert!(o.equivalence_p_value(1.05).unwrap() < 0.05);
        assert!(o.equivalence_p_value(1.01).unwrap() > 0.5);
        let ci = o.interval.unwrap();
        assert_eq!(
            crate::stats::power::Equivalence::of_interval(ci),
            crate::stats::power::Equivalence::WithinFive
        );
        // A ratio that moves between runs has a between share.
        let moved = over_runs_of_change(
            &[
                (vec![1.0, 1.01, 0.99], vec![1.2, 1.21, 1.19]),
                (vec![1.0, 1.01, 0.99], vec![0.9, 0.91, 0.89]),
            ],
            0.90,
        )
        .unwrap();
        assert!(moved.between_share() > 0.9, "{moved:?}");
        assert!(moved.equivalence_p_value(1.10).unwrap() > 0.05);
        assert!(over_runs_of_change(&[(vec![1.0], vec![1.0])], 0.90).is_none());
    }

    #[test]
    fn equivalence_over_runs_agrees_with_the_90_percent_interval() {
        let o = over_runs(&[vec![1.01, 1.02], vec![0.99, 1.0], vec![1.03, 1.02]], 0.90).unwrap();
        let ci = o.interval.unwrap();
        for margin in [1.01, 1.02, 1.03, 1.05] {
            let inside = ci.low >= 1.0 / margin && ci.high <= margin;
            let p = o.equivalence_p_value(margin).unwrap();
            assert_eq!(inside, p <= 0.05 + 1e-9, "margin {margin}: {ci:?}, p {p}");
        }
        assert!(
            over_runs(&[vec![1.0, 1.1]], 0.90)
                .unwrap()
                .equivalence_p_value(1.1)
                .is_none()
        );
    }

    #[test]
    fn the_p_value_of_one_is_small_where_the_runs_agree_away_from_1() {
        let away = over_runs(
            &[vec![1.5, 1.52], vec![1.48, 1.5], vec![1.51, 1.49]],
            CONFIDENCE,
        )
        .unwrap();
        assert!(away.p_value_of_one().unwrap() < 0.01);
        let near = over_runs(
            &[vec![0.9, 1.1], vec![1.1, 0.9], vec![1.0, 1.02]],
            CONFIDENCE,
        )
        .unwrap();
        assert!(near.p_value_of_one().unwrap() > 0.5);
        assert!(
            over_runs(&[vec![1.5]], CONFIDENCE)
                .unwrap()
                .p_value_of_one()
                .is_none()
        );
    }

    #[test]
    fn a_value_that_is_not_positive_gives_none() {
        assert!(over_runs(&[vec![1.0, 0.0]], CONFIDENCE).is_none());
        assert!(over_runs(&[], CONFIDENCE).is_none());
    }

    /// A small deterministic generator, so the simulation gives the same figures every time.
    struct Lcg(u64);
    impl Lcg {
        fn uniform(&mut self) -> f64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }
        fn normal(&mut self) -> f64 {
            let (u, v) = (self.uniform(), self.uniform());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        }
    }

    #[test]
    fn the_interval_over_runs_covers_where_pooling_the_sessions_does_not() {
        // 3 runs × 6 sessions; a run effect (σ 0.10) twice the sessions' noise (σ 0.05).
        let mut g = Lcg(7);
        let (trials, mut covered, mut pooled_covered) = (2000, 0, 0);
        for _ in 0..trials {
            let runs: Vec<Vec<f64>> = (0..3)
                .map(|_| {
                    let run = 0.10 * g.normal();
                    (0..6).map(|_| (run + 0.05 * g.normal()).exp()).collect()
                })
                .collect();
            let ci = over_runs(&runs, CONFIDENCE).unwrap().interval.unwrap();
            covered += usize::from(ci.low <= 1.0 && ci.high >= 1.0);
            let all: Vec<f64> = runs.concat();
            let pooled = over_sessions(&all, CONFIDENCE).unwrap().interval.unwrap();
            pooled_covered += usize::from(pooled.low <= 1.0 && pooled.high >= 1.0);
        }
        let coverage = covered as f64 / trials as f64;
        let pooled = pooled_covered as f64 / trials as f64;
        assert!(
            (0.93..=0.97).contains(&coverage),
            "over runs covered {coverage}"
        );
        assert!(pooled < 0.75, "pooling the sessions covered {pooled}");
    }
}
