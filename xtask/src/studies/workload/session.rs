//! The D1 Sessions API series of a workload file: a profile's `sessions` (how the Worker opens
//! D1 for the reads), checked at `file:line:column` (only D1's reads run in a session, and a
//! session's statements are prepared per call), and paired with the preparations it runs under.

use anyhow::Result;
use d1bench_core::workload::{Operation, Preparation, SessionMode};

use super::{Workload, WorkloadProfile};

/// The profile's session modes, in file order (default: the plain binding alone).
pub(super) fn modes(profile: &WorkloadProfile) -> Vec<SessionMode> {
    profile
        .sessions
        .as_ref()
        .map_or(vec![SessionMode::None], |l| {
            l.0.iter().map(|m| *m.get_ref()).collect()
        })
}

/// The (preparation, session) series a size and index run, in order: every preparation on the
/// plain binding, then each session, whose statements are prepared per call (a session is
/// opened per request, so nothing prepared on it outlives the request).
pub(super) fn series(
    preparations: &[Preparation],
    sessions: &[SessionMode],
) -> Vec<(Preparation, SessionMode)> {
    let mut series = Vec::new();
    for &preparation in preparations {
        for &session in sessions {
            // Any read stands for all: what a session refuses of a read is its preparation.
            if session.refuses(Operation::PointRead, preparation).is_some() {
                continue;
            }
            series.push((preparation, session));
        }
    }
    series
}

impl Workload {
    /// Refuses, at the mode, a session series the workload cannot run: an operation that is
    /// not one of D1's reads (writes, the cache), or no `per-call` preparation to run it with.
    pub(super) fn check_sessions(&self, profile: &WorkloadProfile) -> Result<()> {
        let Some(sessions) = &profile.sessions else {
            return Ok(());
        };
        let preparations: Vec<Preparation> = profile
            .preparation
            .as_ref()
            .map_or(vec![Preparation::Reuse], |l| {
                l.0.iter().map(|p| *p.get_ref()).collect()
            });
        for mode in &sessions.0 {
            let session = *mode.get_ref();
            if session.is_none() {
                continue;
            }
            for op in &self.file.operation.0 {
                if let Some(refused) = session.refuses(op.get_ref().kind, Preparation::PerCall) {
                    return Err(self.error_at(
                        mode.span(),
                        &format!("a `{session}` session cannot be swept here: {refused}"),
                    ));
                }
            }
            if !preparations.contains(&Preparation::PerCall) {
                return Err(self.error_at(
                    mode.span(),
                    &format!(
                        "a `{session}` session is opened per request, so its series prepares \
                         statements per call: add \"per-call\" to this profile's `preparation`"
                    ),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_pair_with_per_call_statements_only() {
        let all = series(
            &[Preparation::Reuse, Preparation::PerCall],
            &[SessionMode::None, SessionMode::FirstUnconstrained],
        );
        assert_eq!(
            all,
            vec![
                (Preparation::Reuse, SessionMode::None),
                (Preparation::PerCall, SessionMode::None),
                (Preparation::PerCall, SessionMode::FirstUnconstrained),
            ]
        );
        assert_eq!(
            series(&[Preparation::Reuse], &[SessionMode::None]),
            vec![(Preparation::Reuse, SessionMode::None)]
        );
    }
}
