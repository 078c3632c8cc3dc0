//! The reconciliation of a cache workload's updates: every row's version at the end must be at
//! least the newest version acknowledged for it, at most the newest sent, and no row an update
//! never touched may carry one (updates are monotone: `max(version, new)`).

use std::collections::BTreeMap;

use d1bench_core::workload::RowVersion;

/// The versions the updates sent and those acknowledged, per row.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct RowVersions {
    sent: BTreeMap<u64, u64>,
    acknowledged: BTreeMap<u64, u64>,
}

impl RowVersions {
    pub fn sent(&mut self, id: u64, version: u64) {
        let v = self.sent.entry(id).or_default();
        *v = (*v).max(version);
    }

    pub fn acknowledged(&mut self, id: u64, version: u64) {
        let v = self.acknowledged.entry(id).or_default();
        *v = (*v).max(version);
    }

    /// Takes in another process's versions (a shard's, on a shared target): the newest of
    /// each row's, sent and acknowledged.
    pub fn absorb(&mut self, other: &RowVersions) {
        for (id, v) in &other.sent {
            self.sent(*id, *v);
        }
        for (id, v) in &other.acknowledged {
            self.acknowledged(*id, *v);
        }
    }

    /// What disagrees between these and the versions `present`; empty when they reconcile.
    pub fn reconcile(&self, present: &[RowVersion]) -> Vec<String> {
        let mut notes = Vec::new();
        let found: BTreeMap<u64, u64> = present.iter().map(|r| (r.id, r.version)).collect();
        if found.len() != present.len() {
            notes.push("a row carries two versions".to_owned());
        }
        let behind = self
            .acknowledged
            .iter()
            .filter(|(id, v)| found.get(id).is_none_or(|f| f < v))
            .count();
        if behind > 0 {
            notes.push(format!(
                "{behind} rows hold an older version than an acknowledged update wrote"
            ));
        }
        let ahead = found
            .iter()
            .filter(|(id, v)| self.sent.get(id).is_none_or(|s| *v > s))
            .count();
        if ahead > 0 {
            notes.push(format!("{ahead} rows hold a version no update sent"));
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: u64, version: u64) -> RowVersion {
        RowVersion { id, version }
    }

    #[test]
    fn versions_reconcile_between_acknowledged_and_sent() {
        let mut v = RowVersions::default();
        v.sent(1, 1);
        v.sent(1, 2);
        v.acknowledged(1, 1);
        v.sent(2, 1);
        // Row 1 may hold 1 or 2 (2 sent, not acknowledged); row 2 nothing or 1.
        assert!(v.reconcile(&[row(1, 1)]).is_empty());
        assert!(v.reconcile(&[row(1, 2), row(2, 1)]).is_empty());
        // Lost acknowledged update.
        assert_eq!(v.reconcile(&[]).len(), 1);
        // A version from nowhere, and a row no update touched.
        assert_eq!(v.reconcile(&[row(1, 3)]).len(), 1);
        assert_eq!(v.reconcile(&[row(1, 1), row(9, 1)]).len(), 1);
    }
}
