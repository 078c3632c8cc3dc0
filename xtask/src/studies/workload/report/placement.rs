//! Where D1 served a workload's reads, per target and D1 session mode: how many a read replica
//! answered (`meta.served_by_primary` false, a share with its Wilson interval) and the regions
//! and colos D1 named. On Cloudflare this is what says whether the Sessions API series reached a
//! replica at all; locally miniflare has one database and calls every answer the primary's.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use d1bench_core::Outcome;
use d1bench_core::workload::SessionMode;
use d1bench_core::workload::session::serves_reads;

use crate::base::TargetKind;
use crate::reports::numbers::share_text;
use crate::stats::Share;
use crate::studies::workload::row::{OpRow, Phase};

/// The measured, answered D1 reads of one target in one session mode, by where they ran.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    pub target: TargetKind,
    pub session: SessionMode,
    /// Measured reads that D1 answered.
    pub reads: usize,
    /// Of those, the ones whose answer said whether the primary served them.
    pub reported: usize,
    /// Of the reported, the ones a read replica served.
    pub by_replica: usize,
    /// `served_by_region` → reads.
    pub regions: BTreeMap<String, usize>,
    /// `served_by_colo` → reads.
    pub colos: BTreeMap<String, usize>,
}

impl Placement {
    /// The replica's share of the reads whose placement D1 reported.
    pub fn replica_share(&self) -> Option<Share> {
        Share::of(self.by_replica, self.reported)
    }
}

/// One [`Placement`] per target and session mode with reads in `rows`, in that order; targets
/// where D1 reported nothing (the SQLite baseline) are left out.
pub fn placements(rows: &[OpRow]) -> Vec<Placement> {
    let mut groups: BTreeMap<(TargetKind, SessionMode), Placement> = BTreeMap::new();
    for r in rows {
        let answered = r.outcome == Outcome::Ok && !r.target_failed;
        if r.phase != Phase::Measure || !serves_reads(r.op) || !answered {
            continue;
        }
        let p = groups
            .entry((r.target, r.session))
            .or_insert_with(|| Placement {
                target: r.target,
                session: r.session,
                reads: 0,
                reported: 0,
                by_replica: 0,
                regions: BTreeMap::new(),
                colos: BTreeMap::new(),
            });
        p.reads += 1;
        if let Some(primary) = r.served_by_primary {
            p.reported += 1;
            p.by_replica += usize::from(!primary);
        }
        for (seen, value) in [
            (&mut p.regions, &r.served_by_region),
            (&mut p.colos, &r.served_by_colo),
        ] {
            if !value.is_empty() {
                *seen.entry(value.clone()).or_default() += 1;
            }
        }
    }
    groups
        .into_values()
        .filter(|p| p.reported > 0 || !p.regions.is_empty() || !p.colos.is_empty())
        .collect()
}

/// `WEUR 120, ENAM 3`, or `not reported`.
fn counts(seen: &BTreeMap<String, usize>) -> String {
    if seen.is_empty() {
        return "not reported".into();
    }
    seen.iter()
        .map(|(name, n)| format!("{name} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The summary's section, or nothing when no read's placement was reported.
pub fn section(placements: &[Placement]) -> String {
    if placements.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n## Where D1 served the reads\n\nPer target and D1 session mode, the measured reads D1 \
         answered and how many of them a read replica served (`meta.served_by_primary` false; \
         the share with its 95% Wilson interval), with the regions and colos D1 named and how \
         many reads each. Only a read in a session may go to a replica, and only on Cloudflare, \
         for a database with read replication on (a remote run turns it on when its plan reads \
         in sessions). Locally there is one database: miniflare reports every answer as the \
         primary's and names no region.\n\n\
         | target | session | reads | primary reported | by a replica | regions | colos |\n\
         | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for p in placements {
        writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            p.target,
            p.session,
            p.reads,
            p.reported,
            p.replica_share()
                .map_or_else(|| "not reported".to_owned(), |s| share_text(&s)),
            counts(&p.regions),
            counts(&p.colos)
        )
        .unwrap();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies::workload::row::tests_support;
    use d1bench_core::workload::Operation;

    fn read(session: SessionMode, primary: Option<bool>, region: &str) -> OpRow {
        OpRow {
            target: TargetKind::Remote,
            session,
            served_by_primary: primary,
            served_by_region: region.into(),
            ..tests_support::row()
        }
    }

    #[test]
    fn replica_reads_are_counted_per_session_mode_with_their_regions() {
        let mut rows = Vec::new();
        for i in 0..100 {
            rows.push(read(SessionMode::None, Some(true), "WEUR"));
            // A third of the session's reads from a replica in ENAM.
            let replica = i % 3 == 0;
            rows.push(read(
                SessionMode::FirstUnconstrained,
                Some(!replica),
                if replica { "ENAM" } else { "WEUR" },
            ));
        }
        // Not counted: a warm-up read, a refused read, a write.
        rows.push(OpRow {
            phase: Phase::Warmup,
            ..read(SessionMode::FirstUnconstrained, Some(false), "ENAM")
        });
        rows.push(OpRow {
            outcome: Outcome::Refused,
            ..read(SessionMode::FirstUnconstrained, None, "")
        });
        rows.push(OpRow {
            op: Operation::Write,
            ..read(SessionMode::None, Some(true), "WEUR")
        });
        let found = placements(&rows);
        assert_eq!(found.len(), 2);
        let (plain, session) = (&found[0], &found[1]);
        assert_eq!(plain.session, SessionMode::None);
        assert_eq!(
            (plain.reads, plain.reported, plain.by_replica),
            (100, 100, 0)
        );
        assert_eq!(counts(&plain.regions), "WEUR 100");
        assert_eq!(session.session, SessionMode::FirstUnconstrained);
        assert_eq!((session.reads, session.by_replica), (100, 34));
        assert_eq!(counts(&session.regions), "ENAM 34, WEUR 66");
        let share = session.replica_share().unwrap();
        assert!(share.low < 0.34 && 0.34 < share.high, "{share:?}");
        let text = section(&found);
        assert!(
            text.contains("| remote | first-unconstrained | 100 | 100 | 34.0% ("),
            "{text}"
        );
        assert!(
            text.contains("| remote | none | 100 | 100 | 0.0% (0.0–"),
            "{text}"
        );
    }

    #[test]
    fn nothing_reported_is_no_section() {
        let rows = vec![OpRow {
            target: TargetKind::Sqlite,
            ..tests_support::row()
        }];
        assert!(placements(&rows).is_empty());
        assert_eq!(section(&placements(&rows)), "");
        // Regions without the primary flag (runs before it was recorded) still show.
        let found = placements(&[read(SessionMode::None, None, "WNAM")]);
        assert_eq!(found[0].replica_share(), None);
        assert!(section(&found).contains("| remote | none | 1 | 0 | not reported | WNAM 1 |"));
    }
}
