//! The cache workload's shared definitions: a Workers KV read-through cache in front of D1
//! (`cached-read`), the writes it races (`update`, bumping a row's version in `wl_ver`), what a
//! KV entry holds, and how a TTL shorter than KV's 60 s minimum is honoured.
//!
//! Workers KV refuses an `expirationTtl` below 60 s. A TTL is therefore kept by the entry
//! itself: it carries the time it was cached and the row's version, is put with
//! `expirationTtl = max(ttl, 60)` (so KV still drops it eventually), and a read that finds an
//! entry older than the TTL treats it as a miss ([`CacheLookup::Expired`]) and reads D1.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::TABLE;

/// KV's smallest `expirationTtl`, in seconds.
pub const KV_MIN_EXPIRATION_TTL_S: u64 = 60;

/// The binding of the cache's KV namespace in the Worker's wrangler config.
pub const KV_BINDING: &str = "CACHE";

/// The table of row versions: one row per row of `wl` an update has touched.
pub const VERSION_TABLE: &str = "wl_ver";

/// What a cached read found in KV.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheLookup {
    /// An entry younger than the TTL: answered from KV, D1 not asked.
    Hit,
    /// No entry: read from D1 and put into KV.
    Miss,
    /// An entry older than the TTL (KV still held it, as its own expiry is at least 60 s):
    /// a miss, read from D1 and put again.
    Expired,
}

impl CacheLookup {
    pub fn name(self) -> &'static str {
        match self {
            CacheLookup::Hit => "hit",
            CacheLookup::Miss => "miss",
            CacheLookup::Expired => "expired",
        }
    }

    /// Whether D1 answered (a miss of either kind).
    pub fn missed(self) -> bool {
        self != CacheLookup::Hit
    }
}

impl fmt::Display for CacheLookup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The cache parameters of a `cached-read`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheParams {
    /// The TTL, in seconds (above 0).
    pub ttl_s: f64,
    /// What the KV keys of this load start with, so each load point starts with a cold cache
    /// of its own and no entry of another TTL's point answers it.
    pub generation: u64,
}

impl CacheParams {
    /// The KV key of row `id`.
    pub fn key(&self, id: u64) -> String {
        format!("g{}:{TABLE}:{id}", self.generation)
    }

    /// The `expirationTtl` the entry is put with: the TTL rounded up, at least KV's 60 s.
    pub fn expiration_ttl_s(&self) -> u64 {
        (self.ttl_s.ceil() as u64).max(KV_MIN_EXPIRATION_TTL_S)
    }

    /// Whether an entry cached at `cached_at_ms` is still fresh at `now_ms` (both Unix ms).
    pub fn fresh(&self, cached_at_ms: f64, now_ms: f64) -> bool {
        now_ms - cached_at_ms < self.ttl_s * 1000.0
    }

    pub fn check(&self) -> Result<(), String> {
        if !(self.ttl_s.is_finite() && self.ttl_s > 0.0) {
            return Err(format!("a TTL is above 0 seconds, not {}", self.ttl_s));
        }
        Ok(())
    }
}

/// `CREATE TABLE wl_ver (id INTEGER PRIMARY KEY, version INTEGER NOT NULL)`, after dropping it.
pub fn create_version_table() -> Vec<String> {
    vec![
        format!("DROP TABLE IF EXISTS {VERSION_TABLE}"),
        format!("CREATE TABLE {VERSION_TABLE} (id INTEGER PRIMARY KEY, version INTEGER NOT NULL)"),
    ]
}

/// The cached read's D1 query: row `?` with its version (0 until an update touches it).
pub fn versioned_read_sql() -> String {
    format!(
        "SELECT {TABLE}.*, coalesce((SELECT version FROM {VERSION_TABLE} v WHERE v.id = {TABLE}.id), 0) \
         AS version FROM {TABLE} WHERE id = ?"
    )
}

/// An update: row `?1`'s version becomes `?2` unless it is already newer. Idempotent and
/// monotone, so a retried or reordered update never moves a version back.
pub fn update_sql() -> String {
    format!(
        "INSERT INTO {VERSION_TABLE} (id, version) VALUES (?, ?) \
         ON CONFLICT (id) DO UPDATE SET version = max(version, excluded.version)"
    )
}

/// The versions present at the end: `(id, version)` ascending by id.
pub fn versions_sql() -> String {
    format!("SELECT id, version FROM {VERSION_TABLE} ORDER BY id")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ttl_below_kv_minimum_is_kept_by_the_entry() {
        let p = CacheParams {
            ttl_s: 2.5,
            generation: 3,
        };
        assert_eq!(p.expiration_ttl_s(), 60);
        assert!(p.fresh(1000.0, 3499.0));
        assert!(!p.fresh(1000.0, 3500.0));
        let long = CacheParams {
            ttl_s: 300.0,
            generation: 3,
        };
        assert_eq!(long.expiration_ttl_s(), 300);
        assert_eq!(p.key(7), "g3:wl:7");
        assert!(CacheParams { ttl_s: 0.0, ..p }.check().is_err());
        assert!(CacheParams { ttl_s: -1.0, ..p }.check().is_err());
        assert!(CacheLookup::Expired.missed() && !CacheLookup::Hit.missed());
    }
}
