//! The write path of a workload's series: a profile's `path` sends its writes through the
//! Worker's D1 binding (`binding`, the default), through D1's REST API from the load generator
//! (`rest`), or both interleaved per request (`both`, balanced in randomised pairs drawn from
//! the order seed), as the production write-up compared them. Checked at `file:line:column`:
//! only `write` and `batch-write` go through the API, only `--target remote` has it, and a
//! plan whose busiest 5 minutes would send the API more than its 1,200 calls is refused before
//! anything starts.

use std::fmt;

use anyhow::Result;
use d1bench_core::workload::Operation;
use serde::{Deserialize, Serialize};

use super::row::Phase;
use super::{LoadPoint, Workload, WorkloadPlan, WorkloadProfile};
use crate::base::TargetKind;
use crate::targets::remote::rest::{self, Stretch};

/// Which way a series' writes go (a profile's `path`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PathChoice {
    /// Every request through the Worker's D1 binding.
    #[default]
    Binding,
    /// Writes through D1's REST API; the other operations through the binding.
    Rest,
    /// Each write through one or the other, in randomised pairs (one of each per pair).
    Both,
}

impl PathChoice {
    pub fn name(self) -> &'static str {
        match self {
            PathChoice::Binding => "binding",
            PathChoice::Rest => "rest",
            PathChoice::Both => "both",
        }
    }

    /// The share of a series' writes that go through the REST API.
    pub fn rest_share(self) -> f64 {
        match self {
            PathChoice::Binding => 0.0,
            PathChoice::Rest => 1.0,
            PathChoice::Both => 0.5,
        }
    }
}

impl fmt::Display for PathChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The way one request went: a column of results.csv (`binding` in files older than it, and on
/// a target without the REST API, whose only way is its own).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum WritePath {
    #[default]
    Binding,
    Rest,
}

impl WritePath {
    pub fn name(self) -> &'static str {
        match self {
            WritePath::Binding => "binding",
            WritePath::Rest => "rest",
        }
    }
}

impl fmt::Display for WritePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether `op` may go through the REST API: the inserts the API's client sends.
pub fn goes_by_rest(op: Operation) -> bool {
    matches!(op, Operation::Write | Operation::BatchWrite)
}

/// The profile's path (default: the binding).
pub(super) fn choice(profile: &WorkloadProfile) -> PathChoice {
    profile
        .path
        .as_ref()
        .map_or(PathChoice::Binding, |p| *p.get_ref())
}

/// The way each of a phase's requests goes, in order: `ops` are the requests' operations.
/// Reads and updates go through the binding; writes as the point's path says, `both` in pairs
/// whose order is drawn from the order seed (a stream of its own, so the requests themselves
/// are the same as without it). On a target without the REST API everything goes its one way.
pub fn assign(
    order_seed: u64,
    point: &LoadPoint,
    phase: Phase,
    ops: impl Iterator<Item = Operation>,
    has_rest: bool,
) -> Vec<WritePath> {
    let phase_bit = u64::from(phase == Phase::Measure);
    let mut rng = fastrand::Rng::with_seed(
        order_seed
            .wrapping_mul(0xD1B5_4A32_D192_ED03)
            .wrapping_add((point.id as u64) << 1 | phase_bit)
            ^ 0x5245_5354, // "REST"
    );
    let mut pair: Option<WritePath> = None;
    ops.map(|op| {
        if !has_rest || !goes_by_rest(op) {
            return WritePath::Binding;
        }
        match point.path {
            PathChoice::Binding => WritePath::Binding,
            PathChoice::Rest => WritePath::Rest,
            PathChoice::Both => match pair.take() {
                Some(second) => second,
                None => {
                    let (first, second) = if rng.bool() {
                        (WritePath::Rest, WritePath::Binding)
                    } else {
                        (WritePath::Binding, WritePath::Rest)
                    };
                    pair = Some(second);
                    first
                }
            },
        }
    })
    .collect()
}

/// The plan's timetable as REST API calls a second, point after point, warm-up included: a
/// point's rate × the share of its requests that are writes × the share of those its path sends
/// by REST × its policy's most attempts (each retry is a call). Seeding and checks between
/// points send none; laying the points end to end without them can only raise the busiest
/// window, so the price is an upper bound.
pub fn rest_stretches(plan: &WorkloadPlan) -> Vec<Stretch> {
    plan.points
        .iter()
        .map(|p| {
            let writes: f64 = p
                .ops
                .iter()
                .filter(|o| goes_by_rest(o.op))
                .map(|o| f64::from(o.weight) / 100.0)
                .sum();
            Stretch {
                seconds: plan.warmup_s + plan.duration_s,
                per_second: p.rate
                    * writes
                    * p.path.rest_share()
                    * f64::from(p.retry.max_attempts.max(1)),
            }
        })
        .collect()
}

/// The most REST API calls any 5 minutes of the plan would send, when it sends any.
pub fn busiest_rest_window(plan: &WorkloadPlan) -> Option<f64> {
    plan.points
        .iter()
        .any(|p| p.path != PathChoice::Binding)
        .then(|| rest::busiest_window(&rest_stretches(plan)))
}

impl Workload {
    /// Refuses, at the `path`, a REST path in a workload without writes (only `write` and
    /// `batch-write` go through the API).
    pub(super) fn check_path(&self, profile: &WorkloadProfile) -> Result<()> {
        let Some(path) = &profile.path else {
            return Ok(());
        };
        let writes = self
            .file
            .operation
            .0
            .iter()
            .any(|o| goes_by_rest(o.get_ref().kind));
        if *path.get_ref() != PathChoice::Binding && !writes {
            return Err(self.error_at(
                path.span(),
                &format!(
                    "`path = \"{}\"` sends writes through D1's REST API, but this workload \
                     declares no `write` or `batch-write`",
                    path.get_ref()
                ),
            ));
        }
        Ok(())
    }

    /// Refuses, at the `path` of the profile a run uses, a REST path on a target without D1's
    /// REST API (only `--target remote` has it), and a plan whose busiest 5 minutes would pass
    /// the API's rate limit.
    pub fn check_path_target(
        &self,
        profile: &WorkloadProfile,
        plan: &WorkloadPlan,
        target: TargetKind,
    ) -> Result<()> {
        let Some(path) = &profile.path else {
            return Ok(());
        };
        if *path.get_ref() == PathChoice::Binding {
            return Ok(());
        }
        if target != TargetKind::Remote {
            return Err(self.error_at(
                path.span(),
                &format!(
                    "`path = \"{}\"` writes through D1's REST API, which only `--target remote` \
                     has, not `--target {target}`: use a profile whose path is `binding`",
                    path.get_ref()
                ),
            ));
        }
        rest::check_rate_limit(&rest_stretches(plan))
            .map_err(|why| self.error_at(path.span(), &why))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies::workload::PlannedOp;
    use crate::studies::workload::RetryPolicy;
    use d1bench_core::workload::{IndexKind, Preparation, SessionMode};

    fn point(path: PathChoice) -> LoadPoint {
        LoadPoint {
            id: 3,
            table_rows: 100,
            index: IndexKind::Key,
            preparation: Preparation::Reuse,
            session: SessionMode::None,
            rate: 40.0,
            ops: vec![PlannedOp {
                op: Operation::Write,
                weight: 100,
                rows: 1,
            }],
            retry: RetryPolicy::NONE,
            ttl_s: None,
            path,
        }
    }

    #[test]
    fn both_paths_take_half_the_writes_in_randomised_pairs_and_reads_stay_on_the_binding() {
        let ops = (0..200).map(|i| {
            if i % 5 == 4 {
                Operation::PointRead
            } else {
                Operation::Write
            }
        });
        let paths = assign(1, &point(PathChoice::Both), Phase::Measure, ops, true);
        let writes: Vec<WritePath> = paths
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 5 != 4)
            .map(|(_, p)| *p)
            .collect();
        assert_eq!(writes.len(), 160);
        // Each pair of writes is one of each, in an order drawn from the seed: both orders occur.
        for pair in writes.chunks(2) {
            assert_ne!(pair[0], pair[1], "{writes:?}");
        }
        let rest_first = writes.chunks(2).filter(|p| p[0] == WritePath::Rest).count();
        assert!((20..=60).contains(&rest_first), "{rest_first} of 80");
        assert!(
            paths
                .iter()
                .enumerate()
                .filter(|(i, _)| i % 5 == 4)
                .all(|(_, p)| *p == WritePath::Binding)
        );
        // The same seed, the same order; another seed, another.
        let again = assign(
            1,
            &point(PathChoice::Both),
            Phase::Measure,
            std::iter::repeat_n(Operation::Write, 40),
            true,
        );
        let other = assign(
            2,
            &point(PathChoice::Both),
            Phase::Measure,
            std::iter::repeat_n(Operation::Write, 40),
            true,
        );
        assert_eq!(
            again,
            assign(
                1,
                &point(PathChoice::Both),
                Phase::Measure,
                std::iter::repeat_n(Operation::Write, 40),
                true
            )
        );
        assert_ne!(again, other);
    }

    #[test]
    fn without_the_rest_api_every_request_goes_its_one_way() {
        for choice in [PathChoice::Rest, PathChoice::Both] {
            let paths = assign(
                1,
                &point(choice),
                Phase::Warmup,
                std::iter::repeat_n(Operation::Write, 10),
                false,
            );
            assert!(paths.iter().all(|p| *p == WritePath::Binding));
        }
        let paths = assign(
            1,
            &point(PathChoice::Rest),
            Phase::Warmup,
            [Operation::Write, Operation::Update, Operation::BatchWrite].into_iter(),
            true,
        );
        assert_eq!(
            paths,
            [WritePath::Rest, WritePath::Binding, WritePath::Rest]
        );
    }
}
