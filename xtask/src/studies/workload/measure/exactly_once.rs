//! The exactly-once reconciliation of a workload's writes: every acknowledged write's id present
//! once, no id present twice, no id present that no request wrote, and (allowed, but counted)
//! the writes present that were never acknowledged: an attempt whose answer was lost or refused
//! after it landed, which an idempotent retry then finds already there.

use std::collections::BTreeSet;

/// The writes' ids: acknowledged, and sent at least once (acknowledged or not).
#[derive(Debug, Default, Clone)]
pub struct Writes {
    pub acknowledged: BTreeSet<u64>,
    pub attempted: BTreeSet<u64>,
}

/// What the table's write ids say against the acknowledgements.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct WriteTally {
    pub acknowledged: usize,
    /// Acknowledged ids not in the table.
    pub missing: Vec<u64>,
    /// Ids present more than once (each once here).
    pub duplicated: Vec<u64>,
    /// Ids present that were sent but never acknowledged.
    pub unacknowledged_present: Vec<u64>,
    /// Ids present that no request sent.
    pub stray: Vec<u64>,
}

impl WriteTally {
    /// Whether every acknowledged write is present exactly once and nothing else is wrong.
    #[cfg(test)]
    pub fn exactly_once(&self) -> bool {
        self.missing.is_empty() && self.duplicated.is_empty() && self.stray.is_empty()
    }

    /// What is wrong, for the check's note; empty when exactly once.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        let first = |ids: &[u64]| {
            ids.first()
                .map_or(String::new(), |id| format!(" (first id {id})"))
        };
        if !self.missing.is_empty() {
            notes.push(format!(
                "{} acknowledged writes missing{}",
                self.missing.len(),
                first(&self.missing)
            ));
        }
        if !self.duplicated.is_empty() {
            notes.push(format!(
                "{} writes present more than once{}",
                self.duplicated.len(),
                first(&self.duplicated)
            ));
        }
        if !self.stray.is_empty() {
            notes.push(format!(
                "{} write ids present that no request sent{}",
                self.stray.len(),
                first(&self.stray)
            ));
        }
        notes
    }
}

/// Reconciles `present` (the table's write ids, as often as each is present) with `writes`.
pub fn reconcile(writes: &Writes, present: &[u64]) -> WriteTally {
    let mut seen = BTreeSet::new();
    let mut tally = WriteTally {
        acknowledged: writes.acknowledged.len(),
        ..WriteTally::default()
    };
    for &id in present {
        if !seen.insert(id) {
            if tally.duplicated.last() != Some(&id) {
                tally.duplicated.push(id);
            }
            continue;
        }
        if writes.acknowledged.contains(&id) {
            continue;
        }
        if writes.attempted.contains(&id) {
            tally.unacknowledged_present.push(id);
        } else {
            tally.stray.push(id);
        }
    }
    tally.missing = writes.acknowledged.difference(&seen).copied().collect();
    tally
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writes(acknowledged: &[u64], attempted: &[u64]) -> Writes {
        Writes {
            acknowledged: acknowledged.iter().copied().collect(),
            attempted: attempted.iter().chain(acknowledged).copied().collect(),
        }
    }

    #[test]
    fn every_acknowledged_write_once_reconciles() {
        let t = reconcile(&writes(&[10, 11, 12], &[]), &[10, 11, 12]);
        assert!(t.exactly_once(), "{t:?}");
        assert_eq!(t.acknowledged, 3);
        assert!(t.notes().is_empty());
    }

    #[test]
    fn a_duplicated_and_a_missing_write_are_caught() {
        let t = reconcile(&writes(&[10, 11, 12], &[]), &[10, 11, 11]);
        assert!(!t.exactly_once());
        assert_eq!(t.duplicated, [11]);
        assert_eq!(t.missing, [12]);
        let notes = t.notes().join("; ");
        assert!(
            notes.contains("1 acknowledged writes missing (first id 12)"),
            "{notes}"
        );
        assert!(
            notes.contains("1 writes present more than once (first id 11)"),
            "{notes}"
        );
        // A duplicate of an id sent but not acknowledged is a duplicate too.
        let t = reconcile(&writes(&[10], &[13]), &[10, 13, 13]);
        assert_eq!(t.duplicated, [13]);
        assert!(!t.exactly_once());
    }

    #[test]
    fn an_unacknowledged_write_may_land_once_but_a_stray_id_may_not() {
        let t = reconcile(&writes(&[10], &[11]), &[10, 11]);
        assert!(t.exactly_once(), "{t:?}");
        assert_eq!(t.unacknowledged_present, [11]);
        let t = reconcile(&writes(&[10], &[11]), &[10, 99]);
        assert_eq!(t.stray, [99]);
        assert!(!t.exactly_once());
    }
}
