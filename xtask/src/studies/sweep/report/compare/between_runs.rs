//! What compare adds to each change beside the pair's own sessions: the hosts' speed (the second
//! run's host against the first's, over the fixed reference workload both recorded,
//! [`HostShift`]), divided out of the times where the hosts differ beyond the reference's noise;
//! and the variance between runs that one pair cannot see, read from a committed replicate set
//! of the same design ([`ReplicateSet`]: runs of one experiment, profile, target, baseline,
//! Workers and Worker build, made at separate times): per point, the between-run standard deviation
//! of its time and of each own ratio ([`crate::stats::runs`]), added to the variance of its
//! change ([`crate::stats::adjust`]).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Loaded;
use super::key::{PointKey, keyed, session_values};
use super::own_ratio::Kind;
use crate::records::RunRecord;
use crate::records::replicates::ReplicateSet;
use crate::reports::host_speed::{HostShift, HostVerdict};
use crate::stats::CONFIDENCE;
use crate::stats::adjust::{divided_by, with_between_runs};
use crate::stats::runs::over_runs;
use crate::stats::sessions::Change;

/// The variance between runs of a replicate set, per point.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BetweenRuns {
    /// The set it was read from, and how many runs it holds.
    pub set: PathBuf,
    pub runs: usize,
    /// Per point (keys hold shares, so no map orders them; a set has a few hundred points).
    time: Vec<(PointKey, f64)>,
    ratios: Vec<((Kind, PointKey), f64)>,
}

/// What compare.json says of the set it used (the runs compared left out of it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BetweenRunsRef {
    pub set: PathBuf,
    pub runs: usize,
    /// The median and the largest between-run standard deviation of the points' times and own
    /// ratios (on the logs: 0.05 ≈ 5%).
    pub time_sd_median: f64,
    pub time_sd_max: f64,
    pub ratio_sd_median: f64,
    pub ratio_sd_max: f64,
}

impl BetweenRuns {
    /// The set's variance between runs from its `runs` (each read back as compare reads a run).
    pub fn of_runs(set: &Path, runs: &[Loaded]) -> BetweenRuns {
        let keyed: Vec<_> = runs.iter().map(|r| keyed(&r.rows, r.axis)).collect();
        let keys: Vec<PointKey> = keyed
            .first()
            .map(|k| k.iter().map(|(key, _)| key.clone()).collect())
            .unwrap_or_default();
        let sd = |series: &[Vec<f64>]| {
            over_runs(series, CONFIDENCE)
                .filter(|o| o.runs() >= 2)
                .map(|o| o.between_sd)
        };
        let mut time = Vec::new();
        let mut ratios = Vec::new();
        for key in keys {
            let values: Vec<Vec<f64>> = keyed
                .iter()
                .filter_map(|run| run.iter().find(|(k, _)| *k == key))
                .map(|(_, point)| session_values(point).into_values().collect())
                .collect();
            if let Some(sd) = sd(&values) {
                time.push((key.clone(), sd));
            }
            for kind in Kind::ALL {
                let series: Vec<Vec<f64>> = keyed
                    .iter()
                    .filter_map(|run| kind.series(run, &key))
                    .collect();
                if let Some(sd) = sd(&series) {
                    ratios.push(((kind, key.clone()), sd));
                }
            }
        }
        BetweenRuns {
            set: set.to_owned(),
            runs: runs.len(),
            time: pooled(time, |key| key.target),
            ratios: pooled(ratios, |(kind, key)| (*kind, key.target)),
        }
    }

    /// The committed replicate set (under `root`, [`ReplicateSet::all`]) of `b`'s design with
    /// two runs or more besides the runs compared (`exclude`, by run id: a run's own difference
    /// from the other must not widen the noise it is judged against), read; `None` when there
    /// is none.
    pub fn find(
        root: &Path,
        b: &RunRecord,
        exclude: &[&str],
    ) -> anyhow::Result<Option<BetweenRuns>> {
        for set in ReplicateSet::all(root) {
            if !set.holds_design_of(b) {
                continue;
            }
            let runs = others(&set, exclude)?;
            if runs.len() >= 2 {
                return Ok(Some(BetweenRuns::of_runs(&set.path, &runs)));
            }
        }
        Ok(None)
    }

    /// The replicate set in `dir` (`compare --replicates`), which must be of `b`'s design and
    /// hold two runs or more besides those compared (`exclude`, by run id); refused, naming
    /// what is wrong, otherwise.
    pub fn of_set(dir: &Path, b: &RunRecord, exclude: &[&str]) -> anyhow::Result<BetweenRuns> {
        let set = ReplicateSet::read(dir)?;
        if let Some((field, theirs, mine)) = set.first_difference(b) {
            anyhow::bail!(
                "--replicates {}: its runs are not of run b's design ({field}: the set has \
                 `{theirs}`, run b `{mine}`), so their variance between runs is not b's",
                dir.display()
            );
        }
        let runs = others(&set, exclude)?;
        if runs.len() < 2 {
            anyhow::bail!(
                "--replicates {}: {} run(s) besides the two compared; a variance between runs \
                 needs two or more",
                dir.display(),
                runs.len()
            );
        }
        Ok(BetweenRuns::of_runs(&set.path, &runs))
    }

    pub fn describe(&self) -> BetweenRunsRef {
        let stats = |values: Vec<f64>| {
            let mut v = values;
            v.sort_by(f64::total_cmp);
            let median = crate::stats::median(&v).unwrap_or(0.0);
            (median, v.last().copied().unwrap_or(0.0))
        };
        let (time_sd_median, time_sd_max) = stats(self.time.iter().map(|(_, sd)| *sd).collect());
        let (ratio_sd_median, ratio_sd_max) =
            stats(self.ratios.iter().map(|(_, sd)| *sd).collect());
        BetweenRunsRef {
            set: self.set.clone(),
            runs: self.runs,
            time_sd_median,
            time_sd_max,
            ratio_sd_median,
            ratio_sd_max,
        }
    }
}

/// The runs of `set` but those compared (`exclude`, by run id: a run's own difference from the
/// other must not widen the noise it is judged against), each read as compare reads a run.
fn others(set: &ReplicateSet, exclude: &[&str]) -> anyhow::Result<Vec<Loaded>> {
    set.runs
        .iter()
        .filter(|r| !exclude.contains(&r.record.run.id.as_str()))
        .map(|r| super::load(&r.dir.path, "a replicate run"))
        .collect()
}

/// Each point's between-run standard deviation replaced by the root mean square of those of
/// its group's points (`group`: the target, or the kind of ratio and the target). A set of r
/// runs gives one point's variance between runs on r − 1 degrees of freedom (2 for a set of
/// three), which reads 0 at most points where it is not 0: measured on ten bare-SQLite smoke
/// runs of one design, strategy ÷ bound at 8 columns moved by 2.6% from run to run, and three
/// of those runs put it at 0; an A/A pair judged against per-point values still called it
/// changed. Pooled over a group's points it rests on (r − 1) × points.
fn pooled<K, G: PartialEq>(values: Vec<(K, f64)>, group: impl Fn(&K) -> G) -> Vec<(K, f64)> {
    let pooled: Vec<f64> = values
        .iter()
        .map(|(key, _)| {
            let g = group(key);
            let of_group: Vec<f64> = values
                .iter()
                .filter(|(k, _)| group(k) == g)
                .map(|(_, sd)| sd * sd)
                .collect();
            (of_group.iter().sum::<f64>() / of_group.len() as f64).sqrt()
        })
        .collect();
    values
        .into_iter()
        .zip(pooled)
        .map(|((key, _), sd)| (key, sd))
        .collect()
}

/// What compare adjusts each change for; nothing at all for `calibrate`'s halves of one run.
#[derive(Debug, Clone, Default)]
pub struct Adjust {
    /// The hosts' shift, applied to the times only where the hosts differ.
    pub host: Option<HostShift>,
    pub between: Option<BetweenRuns>,
}

impl Adjust {
    /// The hosts' shift when it is to be divided out of the times.
    pub fn host_applied(&self) -> Option<&HostShift> {
        self.host
            .as_ref()
            .filter(|h| h.verdict != HostVerdict::Same)
    }

    /// A point's change of time: the variance between runs added, the hosts' shift divided out.
    pub fn time(&self, key: &PointKey, change: &Change) -> Change {
        let mut c = *change;
        let sd = self
            .between
            .as_ref()
            .and_then(|b| b.time.iter().find(|(k, _)| k == key).map(|(_, sd)| sd));
        if let Some(sd) = sd {
            c = with_between_runs(&c, *sd, CONFIDENCE);
        }
        if let Some(h) = self.host_applied() {
            c = divided_by(&c, h.ratio, h.log_se, h.df, CONFIDENCE);
        }
        c
    }

    /// A point's change of an own ratio: the variance between runs added (the ratios cancel the
    /// hosts' speed).
    pub(super) fn ratio(&self, kind: Kind, key: &PointKey, change: &Change) -> Change {
        let sd = self.between.as_ref().and_then(|b| {
            b.ratios
                .iter()
                .find(|((k, p), _)| *k == kind && p == key)
                .map(|(_, sd)| sd)
        });
        match sd {
            Some(sd) => with_between_runs(change, *sd, CONFIDENCE),
            None => *change,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_group_takes_the_root_mean_square_of_its_points() {
        let sds = vec![(("a", 1), 0.0), (("a", 2), 0.04), (("b", 1), 0.1)];
        let pooled = pooled(sds, |(group, _)| *group);
        let a = (0.04_f64 * 0.04 / 2.0).sqrt();
        assert_eq!(pooled[0], (("a", 1), a));
        assert_eq!(pooled[1], (("a", 2), a));
        // A group of one keeps its own.
        assert_eq!(pooled[2], (("b", 1), 0.1));
    }

    #[test]
    fn a_set_of_another_design_is_refused_naming_the_field() {
        let root = crate::readme::replicates::fixture(
            "two-workers",
            &["docs/runs/replicates/two-workers/20261207T001723Z-local"],
        );
        let dir = root.path().join("docs/runs/replicates/two-workers");
        let mut b =
            crate::records::RunRecord::read(&dir.join("20261207T001723Z-local").join("run.toml"))
                .unwrap();
        b.run.profile = "smoke".into();
        let err = BetweenRuns::of_set(&dir, &b, &[]).unwrap_err().to_string();
        assert!(
            err.contains("not of run b's design (run.profile: the set has `full`, run b `smoke`)"),
            "{err}"
        );
    }
}
