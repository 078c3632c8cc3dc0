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
//!   over the runs' log means (valid however the variance splits between and within runs, since
//!   each run mean carries both);
//! - the variance is split by one-way random effects (the method of moments, ANOVA's): within
//!   runs, the sessions' pooled variance of logs `s_w²`; between runs, `σ_b² = max(0, s_m² −
//!   s_w² / ñ)`, where `s_m²` is the variance of the runs' log means and ñ the harmonic mean of
//!   their session counts. The between-run share `σ_b² / (σ_b² + s_w²)` says how much of the
//!   spread a single run's sessions cannot see;
//! - [`OverRuns::held_in`] counts the runs whose own interval over sessions excludes 1 on the
//!   side of the whole: in how many runs the finding held on its own.
//!
//! Runs that replayed one schedule (one order seed: session s of each ran the same probes in the
//! same places, [`Schedules`]) are not independent in what a probe's place does to its time. A
//! place's effect `b_s` repeats in every such run, so it moves all their means alike, and the
//! spread of the runs' means cannot show it. Measured on the local D1 (2026-12-07, 8 runs × 6
//! sessions of one order seed): a session's place explained up to 15% of a point's time (literal
//! at 64 columns 1.4× slower in session 0 of every run), while the runs' means agreed closer than
//! their sessions' spread allows. The model is then crossed, `y_rs = μ + a_r + b_s + e_rs`, and
//! with P the chance that two of the R runs share a schedule (`Σ n_g² / R²` over the groups of
//! runs sharing one), the mean's variance is `s_m² / R + σ_s² / ñ · (P·R − 1) / (R − 1)`: the
//! second term is 0 when every run has its own schedule (their means' spread holds the places'
//! effects then) and `σ_s² / ñ` when all share one. `σ_s²` is estimated by two-way ANOVA over the
//! sessions the runs of a shared schedule all have, `(MS_session − MS_residual) / n_g` (at least
//! 0), pooled over such groups; the interval is Student's t with Satterthwaite's degrees of
//! freedom. Two limits the next person should know: with two sessions a run the places have one
//! degree of freedom and the interval covered 87–92% in simulation, not 95%; and every run weighs
//! alike in the mean, so a large group sharing one order (one draw of its places) outweighs the
//! runs of their own orders in a mixed set, where weights by what each holds would not.
//!
//! Checked by simulation below: coverage near nominal with a run effect twice the sessions' noise,
//! where the interval that pools every session as independent covers far less; and with a shared
//! schedule whose places move a point as much as the sessions' noise, where the runs' spread
//! alone covers far less.

use std::collections::BTreeMap;

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
    /// The standard deviation of a session's place in a schedule that runs shared, `σ_s` (a
    /// share; 0 when each run had a schedule of its own).
    pub schedule_sd: f64,
    /// The standard error of the centre's logarithm over runs (`s_m ÷ √R`, and the shared
    /// schedule's term; 0 with one run).
    pub log_se: f64,
    /// The degrees of freedom of its t: R − 1, or Satterthwaite's with a shared schedule.
    pub df: f64,
    /// The standard deviation of one run's log value as a run with a schedule of its own would
    /// vary: `√(s_m² + σ_s² / ñ)`, `s_m` alone when no runs shared one. What more runs, each with
    /// its own order, would average down.
    pub own_schedule_run_sd: f64,
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

    /// The two-sided p-value of "the ratio is 1", Student's t over the runs' logs with
    /// [`OverRuns::df`] degrees of freedom; `None` with fewer than two runs. Runs that agree
    /// exactly give 0 for any ratio but 1, and 1 for 1.
    pub fn p_value_of_one(&self) -> Option<f64> {
        let r = self.runs();
        if r < 2 {
            return None;
        }
        let log = self.center.ln();
        if self.log_se == 0.0 {
            return Some(if log == 0.0 { 1.0 } else { 0.0 });
        }
        let t = StudentsT::new(0.0, 1.0, self.df).expect("two or more runs");
        Some(2.0 * (1.0 - t.cdf((log / self.log_se).abs())))
    }

    /// The p-value of two one-sided tests that the ratio lies within `1 ÷ margin` to `margin`
    /// (`margin` a factor: 1.10 = ±10%), Student's t over the runs' logs with [`OverRuns::df`]
    /// degrees of freedom: the larger of the two one-sided p-values. Small when the runs show the
    /// ratio equivalent to 1 within the margin; `None` with fewer than two runs. Runs that agree
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
        let t = StudentsT::new(0.0, 1.0, self.df).expect("two or more runs");
        let lower = 1.0 - t.cdf((log + delta) / self.log_se);
        let upper = 1.0 - t.cdf((delta - log) / self.log_se);
        Some(lower.max(upper))
    }
}

/// Which runs replayed one schedule: each run's order seed by its place in the runs given (a
/// run past the end, or with `None`, had a schedule of its own). The default: every run its own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Schedules(pub Vec<Option<u64>>);

impl Schedules {
    /// Runs `0..runs` all replaying one schedule.
    pub fn shared(runs: usize) -> Schedules {
        Schedules(vec![Some(0); runs])
    }

    /// The groups of runs (their places among `kept`, each a place in the runs given) that
    /// share a schedule, one group per schedule, a run with one of its own alone in its group.
    fn groups(&self, kept: &[usize]) -> Vec<Vec<usize>> {
        let mut shared: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
        let mut groups = Vec::new();
        for (i, run) in kept.iter().enumerate() {
            match self.0.get(*run).copied().flatten() {
                Some(seed) => shared.entry(seed).or_default().push(i),
                None => groups.push(vec![i]),
            }
        }
        groups.extend(shared.into_values());
        groups
    }
}

/// The two-level estimate of `runs` (each run's values, one per session, each positive) at
/// `level`, each run with a schedule of its own; `None` when no run has a value or any value is
/// not positive. Runs without a value are left out.
pub fn over_runs(runs: &[Vec<f64>], level: f64) -> Option<OverRuns> {
    let keyed: Vec<BTreeMap<usize, f64>> = runs
        .iter()
        .map(|r| r.iter().copied().enumerate().collect())
        .collect();
    over_runs_scheduled(&keyed, &Schedules::default(), level)
}

/// [`over_runs`] of runs whose values are keyed by the session they were measured in, with
/// which of them replayed one schedule (see the module's header for the shared schedule's term).
pub fn over_runs_scheduled(
    runs: &[BTreeMap<usize, f64>],
    schedules: &Schedules,
    level: f64,
) -> Option<OverRuns> {
    let kept: Vec<usize> = (0..runs.len()).filter(|&r| !runs[r].is_empty()).collect();
    if kept.is_empty() {
        return None;
    }
    let each: Vec<_> = kept
        .iter()
        .map(|&r| over_sessions(&runs[r].values().copied().collect::<Vec<_>>(), level))
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
    let groups = schedules.groups(&kept);
    let place = places(runs, &kept, &groups);
    let shared = groups
        .iter()
        .map(|g| (g.len() * g.len()) as f64)
        .sum::<f64>()
        / (r * r) as f64;
    // The shared schedule's term: 0 unless runs share one and its places differ.
    let (schedule_var, schedule_term, schedule_df_part) = match (&place, r >= 2) {
        (Some(place), true) => {
            let k = (shared * r as f64 - 1.0) / ((r - 1) as f64 * harmonic_n);
            let term = k * place.variance;
            (place.variance, term, k * k * place.variance_of_estimate)
        }
        _ => (0.0, 0.0, 0.0),
    };
    let runs_term = var_means / r as f64;
    let log_var = runs_term + schedule_term;
    let df = if r < 2 {
        0.0
    } else if schedule_term == 0.0 || schedule_df_part == 0.0 {
        (r - 1) as f64
    } else {
        // Satterthwaite: each term's square over its degrees of freedom.
        let runs_part = runs_term.powi(2) / (r - 1) as f64;
        (log_var.powi(2) / (runs_part + schedule_df_part))
            .clamp(1.0, (r - 1) as f64 + place.as_ref().map_or(0.0, |p| p.df))
    };
    let interval = between_runs_interval(mean, log_var, df, level);
    Some(OverRuns {
        center: mean.exp(),
        interval,
        per_run: each.iter().map(|o| o.center).collect(),
        per_run_interval: each.iter().map(|o| o.interval).collect(),
        within_sd: within_var.sqrt(),
        between_sd: between_var.sqrt(),
        schedule_sd: schedule_var.sqrt(),
        log_se: log_var.sqrt(),
        df,
        own_schedule_run_sd: (var_means + schedule_var / harmonic_n).sqrt(),
    })
}

/// The variance of a session's place in a schedule runs shared, `σ_s²`, with Satterthwaite's sum
/// of its mean squares (`Σ (c·MS)² / df`, what the degrees of freedom need) and the sessions'
/// degrees of freedom.
struct Place {
    variance: f64,
    variance_of_estimate: f64,
    df: f64,
}

/// `σ_s²` by two-way ANOVA (run × session, one value a cell, on logs) in each group of two or
/// more runs sharing a schedule, over the sessions all its runs have (two or more), pooled by
/// the groups' session degrees of freedom; `None` when no group has two runs and two common
/// sessions.
fn places(runs: &[BTreeMap<usize, f64>], kept: &[usize], groups: &[Vec<usize>]) -> Option<Place> {
    let mut pooled = (0.0, 0.0, 0.0); // Σ df_s·σ², Σ df_s² · var(σ²), Σ df_s
    for group in groups.iter().filter(|g| g.len() >= 2) {
        let members: Vec<&BTreeMap<usize, f64>> = group.iter().map(|&i| &runs[kept[i]]).collect();
        let common: Vec<usize> = members[0]
            .keys()
            .copied()
            .filter(|s| members.iter().all(|m| m.contains_key(s)))
            .collect();
        if common.len() < 2 {
            continue;
        }
        let (n, s) = (members.len() as f64, common.len() as f64);
        let y: Vec<Vec<f64>> = members
            .iter()
            .map(|m| common.iter().map(|k| m[k].ln()).collect())
            .collect();
        let grand = y.iter().flatten().sum::<f64>() / (n * s);
        let run_means: Vec<f64> = y.iter().map(|row| row.iter().sum::<f64>() / s).collect();
        let session_means: Vec<f64> = (0..common.len())
            .map(|j| y.iter().map(|row| row[j]).sum::<f64>() / n)
            .collect();
        let ms_session = n * session_means
            .iter()
            .map(|m| (m - grand).powi(2))
            .sum::<f64>()
            / (s - 1.0);
        let residual: f64 = y
            .iter()
            .enumerate()
            .flat_map(|(i, row)| {
                let (run_means, session_means) = (&run_means, &session_means);
                row.iter()
                    .enumerate()
                    .map(move |(j, v)| (v - run_means[i] - session_means[j] + grand).powi(2))
            })
            .sum();
        let (df_s, df_e) = (s - 1.0, (n - 1.0) * (s - 1.0));
        let ms_residual = residual / df_e;
        let variance = ((ms_session - ms_residual) / n).max(0.0);
        // Satterthwaite's sum for (MS_session − MS_residual) / n: each mean square's share squared
        // over its degrees of freedom.
        let variance_of_estimate = if variance == 0.0 {
            0.0
        } else {
            (ms_session.powi(2) / df_s + ms_residual.powi(2) / df_e) / (n * n)
        };
        pooled.0 += df_s * variance;
        pooled.1 += df_s * df_s * variance_of_estimate;
        pooled.2 += df_s;
    }
    (pooled.2 > 0.0).then(|| Place {
        variance: pooled.0 / pooled.2,
        variance_of_estimate: pooled.1 / (pooled.2 * pooled.2),
        df: pooled.2,
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
        interval: between_runs_interval(mean, var_means / r as f64, (r - 1) as f64, level),
        per_run: each.iter().map(|e| e.log_ratio.exp()).collect(),
        per_run_interval: each.iter().map(|e| Some(e.interval)).collect(),
        within_sd: within_var.sqrt(),
        between_sd: between_var.sqrt(),
        schedule_sd: 0.0,
        log_se: (var_means / r as f64).sqrt(),
        df: r.saturating_sub(1) as f64,
        own_schedule_run_sd: var_means.sqrt(),
    })
}

/// Student's t with `df` degrees of freedom about the log mean `mean` whose variance is
/// `log_var`; `None` without a degree of freedom (fewer than two runs).
fn between_runs_interval(mean: f64, log_var: f64, df: f64, level: f64) -> Option<Interval> {
    (df >= 1.0).then(|| {
        let half = t_quantile(df, level) * log_var.sqrt();
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

    /// Runs that replay one schedule: each session's place moves it by the same amount in every
    /// run (σ 0.08), beside the sessions' own noise (σ 0.04) and no run effect. The runs' means
    /// then agree, and t over them alone covers far less than it says; with the schedule's term
    /// the interval covers near its level. With a schedule of each run's own, the term is 0 and
    /// the runs' spread covers by itself.
    #[test]
    fn runs_sharing_a_schedule_widen_the_interval_by_its_places_and_runs_that_do_not_need_not() {
        let (runs, sessions, trials) = (4, 6, 2000);
        let mut g = Lcg(11);
        let mut draw = |shared: bool| -> Vec<BTreeMap<usize, f64>> {
            let places: Vec<f64> = (0..sessions).map(|_| 0.08 * g.normal()).collect();
            (0..runs)
                .map(|_| {
                    let own: Vec<f64> = (0..sessions).map(|_| 0.08 * g.normal()).collect();
                    (0..sessions)
                        .map(|s| {
                            let place = if shared { places[s] } else { own[s] };
                            (s, (place + 0.04 * g.normal()).exp())
                        })
                        .collect()
                })
                .collect()
        };
        let covers = |ci: Interval| ci.low <= 1.0 && ci.high >= 1.0;
        let (mut naive, mut crossed, mut own) = (0, 0, 0);
        for _ in 0..trials {
            let shared = draw(true);
            let alone = over_runs_scheduled(&shared, &Schedules::default(), CONFIDENCE).unwrap();
            naive += usize::from(covers(alone.interval.unwrap()));
            let with = over_runs_scheduled(&shared, &Schedules::shared(runs), CONFIDENCE).unwrap();
            assert!(with.log_se >= alone.log_se);
            crossed += usize::from(covers(with.interval.unwrap()));
            let apart = draw(false);
            let o = over_runs_scheduled(&apart, &Schedules::default(), CONFIDENCE).unwrap();
            assert_eq!(o.schedule_sd, 0.0);
            own += usize::from(covers(o.interval.unwrap()));
        }
        let rate = |n: usize| n as f64 / trials as f64;
        assert!(
            rate(naive) < 0.75,
            "t over runs alone covered {}",
            rate(naive)
        );
        assert!(
            (0.92..=0.98).contains(&rate(crossed)),
            "with the schedule's term covered {}",
            rate(crossed)
        );
        assert!(
            (0.93..=0.97).contains(&rate(own)),
            "own schedules covered {}",
            rate(own)
        );
    }

    /// The term is `σ_s² / S` when all runs share one schedule (so the variance is
    /// `(MS_run + MS_session − MS_residual) / (R·S)`), 0 for runs of their own, and a run with
    /// a schedule of its own beside a shared pair adds less than the pair alone would.
    #[test]
    fn the_schedules_term_follows_how_many_runs_share_one() {
        // Sessions 0 and 1 apart by a factor 2 in every run; runs apart by little.
        let run = |k: f64| -> BTreeMap<usize, f64> {
            [(0, 1.0 * k), (1, 2.0 * k), (2, 1.0 * k), (3, 2.0 * k)]
                .into_iter()
                .collect()
        };
        let three = [run(1.0), run(1.01), run(0.99)];
        let own = over_runs_scheduled(&three, &Schedules::default(), CONFIDENCE).unwrap();
        let all = over_runs_scheduled(&three, &Schedules::shared(3), CONFIDENCE).unwrap();
        let pair = over_runs_scheduled(
            &three,
            &Schedules(vec![Some(1), Some(1), Some(2)]),
            CONFIDENCE,
        )
        .unwrap();
        assert_eq!(own.schedule_sd, 0.0);
        assert!(all.schedule_sd > 0.3, "{all:?}");
        // σ_s² / S on top of the runs' own term.
        let expected = (own.log_se.powi(2) + all.schedule_sd.powi(2) / 4.0).sqrt();
        assert!((all.log_se - expected).abs() < 1e-12, "{all:?}");
        assert!(
            pair.log_se > own.log_se && pair.log_se < all.log_se,
            "{pair:?}"
        );
        assert!(all.df < 2.0 + 3.0 && all.df >= 1.0);
        // A run missing a session: the places are estimated over the sessions all share.
        let mut gap = three.clone();
        gap[2].remove(&3);
        let o = over_runs_scheduled(&gap, &Schedules::shared(3), CONFIDENCE).unwrap();
        assert!(o.schedule_sd > 0.3, "{o:?}");
    }
}
