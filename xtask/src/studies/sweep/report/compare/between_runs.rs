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
            time,
            ratios,
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
            let runs = set
                .runs
                .iter()
                .filter(|r| !exclude.contains(&r.record.run.id.as_str()))
                .map(|r| super::load(&r.dir.path, "a replicate run"))
                .collect::<anyhow::Result<Vec<_>>>()?;
            if runs.len() >= 2 {
                return Ok(Some(BetweenRuns::of_runs(&set.path, &runs)));
            }
        }
        Ok(None)
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
