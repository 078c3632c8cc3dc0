//! Staleness of cached reads, from the load generator's own knowledge: every acknowledged
//! update (row, version, when its answer was in) and every cached read (row, when it was sent,
//! the version it returned). A read sent after an update to its row was acknowledged, that
//! returned an older version, is stale; its staleness is the read's send time less the
//! acknowledgement time of the first acknowledged update newer than the version it returned.
//! Pure: the cache report feeds it the records.

use std::collections::BTreeMap;

/// An update the target acknowledged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AckedUpdate {
    pub key: u64,
    pub version: u64,
    /// When its whole answer was in, ms since the run started.
    pub acked_ms: f64,
}

/// A cached read that answered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CachedRead {
    pub key: u64,
    /// When it was sent, ms since the run started.
    pub sent_ms: f64,
    /// The version it returned.
    pub version: u64,
}

/// Whether a read returned the newest version acknowledged before it was sent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Freshness {
    Fresh,
    /// Older than an update acknowledged before the read was sent, by this many ms.
    Stale {
        by_ms: f64,
    },
}

/// The acknowledged updates, per row, in order of acknowledgement.
pub struct Timeline {
    by_key: BTreeMap<u64, Vec<AckedUpdate>>,
}

impl Timeline {
    pub fn new(updates: impl IntoIterator<Item = AckedUpdate>) -> Self {
        let mut by_key: BTreeMap<u64, Vec<AckedUpdate>> = BTreeMap::new();
        for u in updates {
            by_key.entry(u.key).or_default().push(u);
        }
        for list in by_key.values_mut() {
            list.sort_by(|a, b| a.acked_ms.total_cmp(&b.acked_ms));
        }
        Timeline { by_key }
    }

    /// Judges one read: stale when an update newer than what it returned had been acknowledged
    /// before it was sent, by the time since the first such acknowledgement.
    pub fn judge(&self, read: &CachedRead) -> Freshness {
        let first_newer = self.by_key.get(&read.key).and_then(|updates| {
            updates
                .iter()
                .take_while(|u| u.acked_ms < read.sent_ms)
                .find(|u| u.version > read.version)
        });
        match first_newer {
            Some(u) => Freshness::Stale {
                by_ms: read.sent_ms - u.acked_ms,
            },
            None => Freshness::Fresh,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(key: u64, version: u64, acked_ms: f64) -> AckedUpdate {
        AckedUpdate {
            key,
            version,
            acked_ms,
        }
    }

    fn read(key: u64, sent_ms: f64, version: u64) -> CachedRead {
        CachedRead {
            key,
            sent_ms,
            version,
        }
    }

    /// Row 1: v1 acknowledged at 100 ms, v2 at 250 ms, v3 at 400 ms; row 2 untouched.
    fn timeline() -> Timeline {
        Timeline::new([
            update(1, 3, 400.0),
            update(1, 1, 100.0),
            update(1, 2, 250.0),
        ])
    }

    #[test]
    fn a_read_of_the_newest_acknowledged_version_is_fresh() {
        let t = timeline();
        assert_eq!(t.judge(&read(1, 50.0, 0)), Freshness::Fresh);
        assert_eq!(t.judge(&read(1, 300.0, 2)), Freshness::Fresh);
        assert_eq!(t.judge(&read(1, 900.0, 3)), Freshness::Fresh);
        assert_eq!(t.judge(&read(2, 900.0, 0)), Freshness::Fresh);
    }

    #[test]
    fn staleness_runs_from_the_first_newer_acknowledgement() {
        let t = timeline();
        // Returned v0 at 300 ms: v1 (acked at 100) is the first newer one.
        assert_eq!(
            t.judge(&read(1, 300.0, 0)),
            Freshness::Stale { by_ms: 200.0 }
        );
        // Returned v1 at 500 ms: v2 (acked at 250) is the first newer one, not v3.
        assert_eq!(
            t.judge(&read(1, 500.0, 1)),
            Freshness::Stale { by_ms: 250.0 }
        );
        // Returned v2 at 401 ms: v3 was acked at 400.
        assert_eq!(t.judge(&read(1, 401.0, 2)), Freshness::Stale { by_ms: 1.0 });
    }

    #[test]
    fn a_write_acknowledged_after_the_read_was_sent_does_not_make_it_stale() {
        let t = timeline();
        // Sent at 250 ms exactly, when v2's answer came: not after it.
        assert_eq!(t.judge(&read(1, 250.0, 1)), Freshness::Fresh);
        // A read that saw an update before its acknowledgement (v3 at 350) is fresh.
        assert_eq!(t.judge(&read(1, 350.0, 3)), Freshness::Fresh);
    }

    /// Updates acknowledged out of version order (a later version answered first): the first
    /// acknowledged newer than the returned version counts.
    #[test]
    fn updates_acknowledged_out_of_order() {
        let t = Timeline::new([update(5, 2, 100.0), update(5, 1, 150.0)]);
        assert_eq!(
            t.judge(&read(5, 200.0, 0)),
            Freshness::Stale { by_ms: 100.0 }
        );
        assert_eq!(
            t.judge(&read(5, 200.0, 1)),
            Freshness::Stale { by_ms: 100.0 }
        );
        assert_eq!(t.judge(&read(5, 200.0, 2)), Freshness::Fresh);
    }
}
