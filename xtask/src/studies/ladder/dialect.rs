//! Which dialect a target's rungs are planned, checked and classified in: SQLite's (the core's
//! `ladder::plan`, for the local D1, in-process SQLite, the Durable Object and Cloudflare) or
//! Postgres's (`d1bench_core_pg_ladder`, for the hyperdrive targets), and which profile of a
//! ladder file each climbs.
//!
//! A ladder file's profile named `postgres-<name>` is the one a Postgres target climbs when
//! asked for `<name>` (param-ceiling's, whose climbs must pass 65,535 parameters, where D1's
//! rungs stop at 32,766); a ladder without one climbs `<name>` itself. A `postgres-` profile's
//! rungs are checked against Postgres's bounds, every other profile's against the core's.

use d1bench_core::Outcome;
use d1bench_core::RefusalKind;
use d1bench_core::ladder::{self, LadderKind, RungError, RungPlan, RungRequest};

use crate::base::TargetKind;

/// The prefix of a profile climbed on Postgres in place of the profile it names.
pub const POSTGRES_PROFILE_PREFIX: &str = "postgres-";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// The core's rungs: SQLite's SQL and D1's error texts.
    Sqlite,
    /// core-pg-ladder's rungs: Postgres's SQL and its SQLSTATEs.
    Postgres,
}

impl Dialect {
    pub fn of(target: TargetKind) -> Self {
        if target.is_postgres() {
            Dialect::Postgres
        } else {
            Dialect::Sqlite
        }
    }

    /// The dialect a profile of this name is checked in.
    pub fn of_profile(name: &str) -> Self {
        if name.starts_with(POSTGRES_PROFILE_PREFIX) {
            Dialect::Postgres
        } else {
            Dialect::Sqlite
        }
    }

    pub fn plan(self, rung: &RungRequest) -> RungPlan {
        match self {
            Dialect::Sqlite => ladder::plan(rung),
            Dialect::Postgres => d1bench_core_pg_ladder::plan(rung),
        }
    }

    pub fn validate(self, rung: &RungRequest) -> Result<(), RungError> {
        match self {
            Dialect::Sqlite => rung.validate(),
            Dialect::Postgres => d1bench_core_pg_ladder::validate(rung),
        }
    }

    /// The outcome of a target's error text (or of none).
    pub fn classify(self, error: Option<&str>) -> (Outcome, Option<RefusalKind>) {
        match self {
            Dialect::Sqlite => ladder::classify(error),
            Dialect::Postgres => d1bench_core_pg_ladder::refusal::classify(error),
        }
    }

    /// Whether a ladder climbs a limit this dialect's targets have (every one on SQLite's: the
    /// sqlite target's own exceptions are the plan's).
    pub fn climbs(self, kind: LadderKind) -> bool {
        match self {
            Dialect::Sqlite => true,
            Dialect::Postgres => d1bench_core_pg_ladder::runs_on_postgres(kind),
        }
    }

    /// The profile of a ladder file this dialect climbs when asked for `asked`: on Postgres its
    /// `postgres-<asked>` when the file has one.
    pub fn profile_name<'a>(
        self,
        asked: &'a str,
        has: impl Fn(&str) -> bool,
    ) -> std::borrow::Cow<'a, str> {
        let postgres = format!("{POSTGRES_PROFILE_PREFIX}{asked}");
        if self == Dialect::Postgres && has(&postgres) {
            postgres.into()
        } else {
            asked.into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_targets_climb_their_own_profile_when_a_file_has_one() {
        assert_eq!(Dialect::of(TargetKind::Hyperdrive), Dialect::Postgres);
        assert_eq!(Dialect::of(TargetKind::Do), Dialect::Sqlite);
        assert_eq!(Dialect::of_profile("postgres-full"), Dialect::Postgres);
        assert_eq!(Dialect::of_profile("full"), Dialect::Sqlite);
        let has = |p: &str| p == "postgres-full";
        assert_eq!(Dialect::Postgres.profile_name("full", has), "postgres-full");
        assert_eq!(Dialect::Postgres.profile_name("smoke", has), "smoke");
        assert_eq!(Dialect::Sqlite.profile_name("full", has), "full");
        assert!(!Dialect::Postgres.climbs(LadderKind::QueryBudget));
        assert!(Dialect::Postgres.climbs(LadderKind::ParamCeiling));
        assert_eq!(
            Dialect::Postgres.classify(Some(
                "cannot pass more than 100 arguments to a function (SQLSTATE 54023)"
            )),
            (Outcome::Refused, Some(RefusalKind::TooManyFunctionArgs))
        );
    }
}
