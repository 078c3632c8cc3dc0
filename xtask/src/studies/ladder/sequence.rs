//! A climb's rung sequence: which value comes next given the rungs so far (the climbing
//! sequence until the first refusal, its confirmations, then bisection down to a resolution),
//! why each was sent ([`Role`]), and what the climb found from its rungs alone ([`Verdict`]).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::Rungs;

/// Why a rung was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// Sizes query-duration's queries; not part of the climb.
    Calibrate,
    /// A value of the climbing sequence, before the first refusal.
    Climb,
    /// A value of the climbing sequence past the first refusal.
    Confirm,
    /// Between the last success and the first refusal.
    Bisect,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Calibrate => "calibrate",
            Role::Climb => "climb",
            Role::Confirm => "confirm",
            Role::Bisect => "bisect",
        }
    }
}

/// Where a climb stands: which values were tried and whether each failed.
#[derive(Debug, Clone)]
pub struct Climber {
    sequence: Vec<usize>,
    resolution: Option<usize>,
    confirm: usize,
    /// value → failed (refused or errored).
    tried: BTreeMap<usize, bool>,
}

/// What a climb found, from its rungs alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The largest value that succeeded below the first failure (or overall, without one).
    pub last_ok: Option<usize>,
    /// The smallest value that failed.
    pub first_failed: Option<usize>,
    /// Whether every confirmation rung failed too; `None` when none was run.
    pub confirmed: Option<bool>,
    /// The largest value tried.
    pub max_tried: Option<usize>,
}

impl Climber {
    pub fn new(rungs: &Rungs, confirm: usize) -> Self {
        Climber {
            sequence: rungs.sequence(),
            resolution: rungs.resolution(),
            confirm,
            tried: BTreeMap::new(),
        }
    }

    pub fn record(&mut self, value: usize, failed: bool) {
        self.tried.insert(value, failed);
    }

    /// The first value of the climbing sequence that failed.
    fn first_climb_failure(&self) -> Option<usize> {
        self.sequence
            .iter()
            .copied()
            .take_while(|v| self.tried.contains_key(v))
            .find(|v| self.tried[v])
    }

    /// The next rung to send, or `None` when the climb is over.
    pub fn next(&self) -> Option<(usize, Role)> {
        let Some(failure) = self.first_climb_failure() else {
            return self
                .sequence
                .iter()
                .copied()
                .find(|v| !self.tried.contains_key(v))
                .map(|v| (v, Role::Climb));
        };
        let after = self
            .sequence
            .iter()
            .position(|&v| v == failure)
            .unwrap_or(0)
            + 1;
        if let Some(&v) = self.sequence[after..]
            .iter()
            .take(self.confirm)
            .find(|v| !self.tried.contains_key(v))
        {
            return Some((v, Role::Confirm));
        }
        let resolution = self.resolution?;
        let hi = self.first_failed()?;
        let lo = self.last_ok_below(hi)?;
        (hi - lo > resolution).then(|| (lo + (hi - lo) / 2, Role::Bisect))
    }

    fn first_failed(&self) -> Option<usize> {
        self.tried.iter().find(|(_, f)| **f).map(|(v, _)| *v)
    }

    fn last_ok_below(&self, bound: usize) -> Option<usize> {
        self.tried
            .range(..bound)
            .rev()
            .find(|(_, f)| !**f)
            .map(|(v, _)| *v)
    }

    pub fn verdict(&self) -> Verdict {
        let first_failed = self.first_failed();
        let last_ok = match first_failed {
            Some(hi) => self.last_ok_below(hi),
            None => self.tried.keys().next_back().copied(),
        };
        let confirmed = self.first_climb_failure().and_then(|failure| {
            let after = self.sequence.iter().position(|&v| v == failure)? + 1;
            let confirms: Vec<bool> = self.sequence[after..]
                .iter()
                .take(self.confirm)
                .filter_map(|v| self.tried.get(v).copied())
                .collect();
            (!confirms.is_empty()).then(|| confirms.iter().all(|f| *f))
        });
        Verdict {
            last_ok,
            first_failed,
            confirmed,
            max_tried: self.tried.keys().next_back().copied(),
        }
    }
}
