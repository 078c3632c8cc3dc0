//! How a workload's reads open D1: through the plain binding, or through a session of D1's
//! Sessions API (`env.DB.withSession(constraint)`), which lets D1 serve reads from a read
//! replica and keeps the reads of one session sequentially consistent (its bookmark).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Operation, Preparation};

/// The session a read runs in: a series of the read-path experiments.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum SessionMode {
    /// `env.DB` itself: no session (every run before the Sessions API series).
    #[default]
    None,
    /// `env.DB.withSession("first-unconstrained")`: the first read may be served by any
    /// replica, however far behind.
    FirstUnconstrained,
    /// `env.DB.withSession("first-primary")`: the first read is served by the primary, later
    /// ones by any replica at least as new as it.
    FirstPrimary,
}

impl SessionMode {
    pub const ALL: [SessionMode; 3] = [
        SessionMode::None,
        SessionMode::FirstUnconstrained,
        SessionMode::FirstPrimary,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SessionMode::None => "none",
            SessionMode::FirstUnconstrained => "first-unconstrained",
            SessionMode::FirstPrimary => "first-primary",
        }
    }

    /// The constraint `withSession` is opened with; `None` for the plain binding.
    pub fn constraint(self) -> Option<&'static str> {
        match self {
            SessionMode::None => None,
            mode => Some(mode.name()),
        }
    }

    pub fn is_none(&self) -> bool {
        *self == SessionMode::None
    }

    /// Why `op`, prepared as `preparation`, cannot run in this session, if it cannot. A
    /// session is opened per request (as Cloudflare's documentation opens one per incoming
    /// request), so its statements are prepared on it per call: a statement kept from an
    /// earlier request would run in that request's session. Only D1's reads run in one: the
    /// series is about where reads are served, and the cached read goes through KV first.
    pub fn refuses(self, op: Operation, preparation: Preparation) -> Option<String> {
        if self.is_none() {
            return None;
        }
        if !serves_reads(op) {
            return Some(format!(
                "`{op}` does not run in a session: sessions apply to D1's reads (point-read, \
                 range-scan, aggregate)"
            ));
        }
        if preparation == Preparation::Reuse {
            return Some(format!(
                "a `{self}` session is opened per request, so its statements are prepared per \
                 call, not reused"
            ));
        }
        None
    }
}

/// Whether `op` is one of D1's reads, the operations a session applies to.
pub fn serves_reads(op: Operation) -> bool {
    matches!(
        op,
        Operation::PointRead | Operation::RangeScan | Operation::Aggregate
    )
}

impl fmt::Display for SessionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_serialize_with_the_constraint_names_of_with_session() {
        for mode in SessionMode::ALL {
            let json = serde_json::to_string(&mode).unwrap();
            assert_eq!(json, format!("\"{}\"", mode.name()));
            assert_eq!(serde_json::from_str::<SessionMode>(&json).unwrap(), mode);
        }
        assert_eq!(SessionMode::None.constraint(), None);
        assert_eq!(
            SessionMode::FirstPrimary.constraint(),
            Some("first-primary")
        );
        assert!(serde_json::from_str::<SessionMode>("\"first-replica\"").is_err());
    }

    #[test]
    fn sessions_take_only_reads_prepared_per_call() {
        let mode = SessionMode::FirstUnconstrained;
        assert_eq!(
            mode.refuses(Operation::PointRead, Preparation::PerCall),
            None
        );
        assert!(
            mode.refuses(Operation::PointRead, Preparation::Reuse)
                .unwrap()
                .contains("per call")
        );
        for op in [Operation::Write, Operation::CachedRead, Operation::Update] {
            assert!(mode.refuses(op, Preparation::PerCall).is_some(), "{op}");
            assert_eq!(SessionMode::None.refuses(op, Preparation::Reuse), None);
        }
    }
}
