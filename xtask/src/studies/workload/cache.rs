//! The cache workload's part of a workload file: `ttls-s` and `cache-keys` in a profile, checked
//! at `file:line:column` (a TTL above 0, keys the smallest table holds, a TTL only where reads go
//! through the cache), and the refusal of a target without Workers KV before anything starts.

use anyhow::Result;
use d1bench_core::workload::Operation;

use super::{Workload, WorkloadProfile};
use crate::base::TargetKind;

/// Longest TTL a profile may sweep: a day.
pub const MAX_TTL_S: f64 = 86_400.0;

impl Workload {
    /// The first operation that reads through Workers KV, with where it is declared.
    fn kv_operation(&self) -> Option<(Operation, std::ops::Range<usize>)> {
        self.file
            .operation
            .0
            .iter()
            .find(|o| o.get_ref().kind.needs_kv())
            .map(|o| (o.get_ref().kind, o.span()))
    }

    /// Whether the workload reads through a Workers KV cache.
    pub fn needs_kv(&self) -> bool {
        self.kv_operation().is_some()
    }

    /// Refuses a target without Workers KV for a workload that needs it, at the operation.
    /// In-process SQLite has none, and a map standing in for KV would measure a map: the
    /// cache's figures (hits, misses, staleness) are KV's or nothing.
    pub fn check_target(&self, target: TargetKind) -> Result<()> {
        if let Some((op, span)) = self.kv_operation()
            && !target.runs_the_worker()
        {
            return Err(self.error_at(
                span,
                &format!(
                    "`{op}` reads through Workers KV, which target `{target}` does not have: run \
                     this workload with `--target local` (wrangler dev's local KV) or \
                     `--target remote`"
                ),
            ));
        }
        Ok(())
    }

    pub(super) fn check_cache(&self, profile: &WorkloadProfile) -> Result<()> {
        let Some(ttls) = &profile.ttls_s else {
            if let Some((op, span)) = self.kv_operation() {
                return Err(self.error_at(
                    span,
                    &format!(
                        "`{op}` needs `ttls-s` (the cache's TTLs, in seconds) in every profile"
                    ),
                ));
            }
            if let Some(keys) = &profile.cache_keys {
                return Err(self.error_at(
                    keys.span(),
                    "`cache-keys` narrows cached reads and updates: this workload has neither",
                ));
            }
            return Ok(());
        };
        if !self.needs_kv() {
            return Err(self.error_at(
                ttls.0[0].span(),
                "`ttls-s` applies to `cached-read`, which this workload does not declare",
            ));
        }
        let mut seen: Vec<f64> = Vec::new();
        for ttl in &ttls.0 {
            let t = *ttl.get_ref();
            if !(t.is_finite() && t > 0.0) {
                return Err(self.error_at(
                    ttl.span(),
                    &format!("a TTL is a number of seconds above 0, not {t}"),
                ));
            }
            if t > MAX_TTL_S {
                return Err(self.error_at(
                    ttl.span(),
                    &format!("a TTL is at most {MAX_TTL_S} seconds (a day)"),
                ));
            }
            if seen.contains(&t) {
                return Err(self.error_at(ttl.span(), "this TTL is listed twice"));
            }
            seen.push(t);
        }
        if let Some(keys) = &profile.cache_keys {
            let smallest = *profile.rows.0[0].get_ref();
            let k = *keys.get_ref();
            if k == 0 || k > smallest {
                return Err(self.error_at(
                    keys.span(),
                    &format!("cache-keys is 1 to the smallest table size ({smallest} rows)"),
                ));
            }
        }
        Ok(())
    }
}
