//! A change between two runs adjusted for what moved beside it: another estimated shift taken
//! out (the hosts' speed: `b ÷ a` of a fixed reference workload, with its own uncertainty), and
//! the variance between runs added that one pair of runs cannot see (each run carries its own
//! run effect, so the difference of two runs carries twice its variance). Both widen the
//! interval and raise the p-value honestly; neither is a threshold.
//!
//! Dividing by an independent estimate `s` with standard error `se_s` on the logs: the log
//! difference `d − log s` has variance `se² + se_s²` and Welch–Satterthwaite degrees of freedom
//! `(v + v_s)² / (v² / df + v_s² / df_s)`. Adding a between-run standard deviation `σ` (on the
//! logs) adds `2σ²` to the variance with the degrees of freedom kept (the σ is taken as known).

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::sessions::{Change, t_quantile};
use super::{Interval, Method};

/// `change` with the independent shift `ratio` (standard error `log_se` on the logs, `df`
/// degrees of freedom) divided out, at `level`.
pub fn divided_by(change: &Change, ratio: f64, log_se: f64, df: f64, level: f64) -> Change {
    let diff = change.ratio.ln() - ratio.ln();
    let (v, vs) = (change.se.powi(2), log_se.powi(2));
    let df = if v + vs == 0.0 {
        change.df
    } else {
        (v + vs).powi(2) / (v.powi(2) / change.df + vs.powi(2) / df)
    };
    rebuilt(diff, (v + vs).sqrt(), df, level, change.interval.method)
}

/// `change` with a variance between runs of `between_sd` (on the logs, each run's) added.
pub fn with_between_runs(change: &Change, between_sd: f64, level: f64) -> Change {
    let se = (change.se.powi(2) + 2.0 * between_sd.powi(2)).sqrt();
    rebuilt(
        change.ratio.ln(),
        se,
        change.df,
        level,
        change.interval.method,
    )
}

fn rebuilt(diff: f64, se: f64, df: f64, level: f64, method: Method) -> Change {
    if se == 0.0 {
        return Change {
            ratio: diff.exp(),
            interval: Interval {
                low: diff.exp(),
                high: diff.exp(),
                coverage: level,
                method,
            },
            p_value: if diff == 0.0 { 1.0 } else { 0.0 },
            df,
            noise_floor: 1.0,
            se: 0.0,
        };
    }
    let t = StudentsT::new(0.0, 1.0, df).expect("positive degrees of freedom");
    let half = t_quantile(df, level) * se;
    Change {
        ratio: diff.exp(),
        interval: Interval {
            low: (diff - half).exp(),
            high: (diff + half).exp(),
            coverage: level,
            method,
        },
        p_value: 2.0 * (1.0 - t.cdf((diff / se).abs())),
        df,
        noise_floor: half.exp(),
        se,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::CONFIDENCE;
    use crate::stats::sessions::change_between;

    #[test]
    fn a_uniform_slowdown_divided_by_the_hosts_shift_is_no_change() {
        let before = [10.0, 10.3, 9.8, 10.1, 10.0, 9.9];
        let after: Vec<f64> = before.iter().map(|v| v * 1.5).collect();
        let raw = change_between(&before, &after, CONFIDENCE).unwrap();
        assert!(raw.p_value < 1e-6 && (raw.ratio - 1.5).abs() < 1e-9);
        let host = change_between(&[20.0, 20.4, 19.8], &[30.0, 30.3, 29.9], CONFIDENCE).unwrap();
        let adjusted = divided_by(&raw, host.ratio, host.se, host.df, CONFIDENCE);
        assert!((adjusted.ratio - 1.0).abs() < 0.01, "{adjusted:?}");
        assert!(adjusted.p_value > 0.5, "{adjusted:?}");
        assert!(adjusted.interval.low < 1.0 && adjusted.interval.high > 1.0);
        assert!(adjusted.se > raw.se);
    }

    #[test]
    fn a_slowdown_beyond_the_hosts_stays_called() {
        let before = [10.0, 10.3, 9.8, 10.1, 10.0, 9.9];
        let after: Vec<f64> = before.iter().map(|v| v * 2.0).collect();
        let raw = change_between(&before, &after, CONFIDENCE).unwrap();
        let host = change_between(&[20.0, 20.4, 19.8], &[30.0, 30.3, 29.9], CONFIDENCE).unwrap();
        let adjusted = divided_by(&raw, host.ratio, host.se, host.df, CONFIDENCE);
        assert!((adjusted.ratio - 4.0 / 3.0).abs() < 0.02, "{adjusted:?}");
        assert!(adjusted.p_value < 0.01 && adjusted.interval.low > 1.0);
    }

    #[test]
    fn variance_between_runs_widens_and_weakens_but_keeps_the_ratio() {
        let raw = change_between(
            &[1.0, 1.02, 0.99, 1.01],
            &[1.1, 1.12, 1.09, 1.11],
            CONFIDENCE,
        )
        .unwrap();
        let wider = with_between_runs(&raw, 0.05, CONFIDENCE);
        assert!((wider.ratio - raw.ratio).abs() < 1e-12);
        assert!(wider.p_value > raw.p_value);
        assert!(wider.interval.low < raw.interval.low && wider.interval.high > raw.interval.high);
        assert_eq!(with_between_runs(&raw, 0.0, CONFIDENCE), raw);
    }
}
