//! Retry policies a workload file declares (`[[retry]]`): none, a fixed delay, or exponential
//! backoff with full jitter, each with a cap on attempts and the refusals it retries (what D1
//! says to retry, and any it opts in to with `also-retry`); their validation at
//! `file:line:column` and the schedule of waits between attempts, drawn from a recorded seed so a
//! run repeats.

use std::fmt;
use std::ops::Range;

use d1bench_core::RefusalKind;
use serde::{Deserialize, Serialize};
use toml::Spanned;

/// Most attempts a policy may make for one request (the first included).
pub const MAX_ATTEMPTS: u32 = 20;

/// Longest wait a policy may declare between two attempts, ms.
pub const MAX_DELAY_MS: f64 = 60_000.0;

/// Which policy: what the records and the reports name it by.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum RetryKind {
    /// One attempt: a refusal is final.
    #[default]
    None,
    /// Wait `delay-ms` after each refused attempt.
    Fixed,
    /// Wait a uniform draw from 0 to `min(cap-ms, delay-ms × 2^(attempt−1))` (full jitter).
    Exponential,
}

impl RetryKind {
    pub fn name(self) -> &'static str {
        match self {
            RetryKind::None => "none",
            RetryKind::Fixed => "fixed",
            RetryKind::Exponential => "exponential",
        }
    }
}

impl fmt::Display for RetryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One `[[retry]]` of a workload file, as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RetryDecl {
    pub policy: RetryKind,
    /// Attempts at most, the first included (fixed and exponential).
    #[serde(default)]
    pub max_attempts: Option<Spanned<i64>>,
    /// The fixed delay, or the exponential base, in ms.
    #[serde(default)]
    pub delay_ms: Option<Spanned<f64>>,
    /// The longest exponential wait, ms.
    #[serde(default)]
    pub cap_ms: Option<Spanned<f64>>,
    /// Seed of the jitter (exponential).
    #[serde(default)]
    pub seed: Option<Spanned<u64>>,
    /// Refusal kinds retried although D1 does not say to retry them (for example `busy`, or
    /// `overloaded`, which D1 says to try later); what D1 says to retry is always retried.
    #[serde(default)]
    pub also_retry: Option<Spanned<Vec<RefusalKind>>>,
}

/// The refusal kinds a policy retries beyond what D1 says to retry: a set of [`RefusalKind`]s,
/// written as their names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Vec<RefusalKind>", into = "Vec<RefusalKind>")]
pub struct AlsoRetried(u32);

impl AlsoRetried {
    pub const NOTHING: AlsoRetried = AlsoRetried(0);

    fn bit(kind: RefusalKind) -> u32 {
        let at = RefusalKind::ALL.iter().position(|&k| k == kind);
        1 << at.expect("every kind is in ALL")
    }

    /// What every policy retried before D1's advice was recorded: SQLite's held lock, D1's
    /// queue and D1's clocks. A policy recorded without `also_retry` followed this.
    pub fn before_d1_advice() -> AlsoRetried {
        [
            RefusalKind::Busy,
            RefusalKind::Overloaded,
            RefusalKind::QueryTimeout,
        ]
        .into_iter()
        .collect::<Vec<_>>()
        .into()
    }

    pub fn contains(self, kind: RefusalKind) -> bool {
        self.0 & Self::bit(kind) != 0
    }

    pub fn kinds(self) -> Vec<RefusalKind> {
        RefusalKind::ALL
            .into_iter()
            .filter(|&k| self.contains(k))
            .collect()
    }
}

impl From<Vec<RefusalKind>> for AlsoRetried {
    fn from(kinds: Vec<RefusalKind>) -> Self {
        AlsoRetried(kinds.into_iter().map(Self::bit).fold(0, |a, b| a | b))
    }
}

impl From<AlsoRetried> for Vec<RefusalKind> {
    fn from(set: AlsoRetried) -> Self {
        set.kinds()
    }
}

/// A retry policy, validated: what a load point follows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RetryPolicy {
    pub kind: RetryKind,
    /// Attempts at most, the first included (1 for [`RetryKind::None`]).
    pub max_attempts: u32,
    /// The fixed delay or the exponential base, ms (0 for none).
    pub delay_ms: f64,
    /// The longest exponential wait, ms (the delay for fixed, 0 for none).
    pub cap_ms: f64,
    /// Seed of the jitter.
    pub seed: u64,
    /// Refusals retried beyond what D1 says to retry ([`RefusalKind::is_retryable`]); a policy
    /// recorded before this field retried [`AlsoRetried::before_d1_advice`].
    #[serde(default = "AlsoRetried::before_d1_advice")]
    pub also_retry: AlsoRetried,
}

impl RetryPolicy {
    pub const NONE: RetryPolicy = RetryPolicy {
        kind: RetryKind::None,
        max_attempts: 1,
        delay_ms: 0.0,
        cap_ms: 0.0,
        seed: 1,
        also_retry: AlsoRetried::NOTHING,
    };

    /// Whether the policy sends a call refused as `kind` again: D1 says to, or the policy opted
    /// in to it.
    pub fn retries(&self, kind: RefusalKind) -> bool {
        kind.is_retryable() || self.also_retry.contains(kind)
    }

    /// How the reports name it: `none`, `fixed 50 ms ×4`, `exponential 10–400 ms ×6`.
    pub fn label(&self) -> String {
        match self.kind {
            RetryKind::None => "none".into(),
            RetryKind::Fixed => format!("fixed {} ms ×{}", self.delay_ms, self.max_attempts),
            RetryKind::Exponential => format!(
                "exponential {}–{} ms ×{}",
                self.delay_ms, self.cap_ms, self.max_attempts
            ),
        }
    }

    /// The wait before attempt `attempt + 1` after attempt `attempt` (from 1) was refused, in
    /// ms; `None` when the cap on attempts is reached. Full jitter draws from `rng`.
    pub fn wait_ms(&self, attempt: u32, rng: &mut fastrand::Rng) -> Option<f64> {
        if attempt >= self.max_attempts {
            return None;
        }
        match self.kind {
            RetryKind::None => None,
            RetryKind::Fixed => Some(self.delay_ms),
            RetryKind::Exponential => {
                let ceiling = (self.delay_ms * 2f64.powi(attempt as i32 - 1)).min(self.cap_ms);
                Some(rng.f64() * ceiling)
            }
        }
    }

    /// The jitter's generator for one request: the policy's seed mixed with what identifies
    /// the request in the run (its point and its place in the timetable).
    pub fn rng(&self, point: usize, seq: u64) -> fastrand::Rng {
        fastrand::Rng::with_seed(
            self.seed
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .wrapping_add((point as u64) << 40 ^ seq),
        )
    }
}

impl RetryDecl {
    /// The policy, or the message and the span of the value it is about.
    pub fn policy(&self, whole: Range<usize>) -> Result<RetryPolicy, (Range<usize>, String)> {
        let kind = self.policy;
        let present: [(&str, Option<Range<usize>>); 5] = [
            (
                "max-attempts",
                self.max_attempts.as_ref().map(Spanned::span),
            ),
            ("delay-ms", self.delay_ms.as_ref().map(Spanned::span)),
            ("cap-ms", self.cap_ms.as_ref().map(Spanned::span)),
            ("seed", self.seed.as_ref().map(Spanned::span)),
            ("also-retry", self.also_retry.as_ref().map(Spanned::span)),
        ];
        let allowed: &[&str] = match kind {
            RetryKind::None => &[],
            RetryKind::Fixed => &["max-attempts", "delay-ms", "also-retry"],
            RetryKind::Exponential => &["max-attempts", "delay-ms", "cap-ms", "seed", "also-retry"],
        };
        for (name, span) in &present {
            if let Some(span) = span
                && !allowed.contains(name)
            {
                return Err((
                    span.clone(),
                    format!("a `{kind}` retry policy takes no `{name}`"),
                ));
            }
        }
        if kind == RetryKind::None {
            return Ok(RetryPolicy::NONE);
        }
        let need = |name: &str| {
            (
                whole.clone(),
                format!("a `{kind}` retry policy needs `{name}`"),
            )
        };
        let attempts = self
            .max_attempts
            .as_ref()
            .ok_or_else(|| need("max-attempts"))?;
        let n = *attempts.get_ref();
        if !(2..=i64::from(MAX_ATTEMPTS)).contains(&n) {
            return Err((
                attempts.span(),
                format!(
                    "max-attempts counts the first attempt: 2 to {MAX_ATTEMPTS} (one attempt is \
                     `policy = \"none\"`)"
                ),
            ));
        }
        let ms = |v: &Spanned<f64>, name: &str| {
            let x = *v.get_ref();
            if x.is_finite() && (0.0..=MAX_DELAY_MS).contains(&x) {
                Ok(x)
            } else {
                Err((
                    v.span(),
                    format!("{name} is 0 to {MAX_DELAY_MS} milliseconds, not {x}"),
                ))
            }
        };
        let delay_decl = self.delay_ms.as_ref().ok_or_else(|| need("delay-ms"))?;
        let delay_ms = ms(delay_decl, "delay-ms")?;
        let cap_ms = match kind {
            RetryKind::Exponential => {
                let cap = self.cap_ms.as_ref().ok_or_else(|| need("cap-ms"))?;
                let c = ms(cap, "cap-ms")?;
                if c < delay_ms {
                    return Err((
                        cap.span(),
                        format!(
                            "cap-ms ({c}) is below the first wait's ceiling, delay-ms ({delay_ms})"
                        ),
                    ));
                }
                if delay_ms == 0.0 {
                    return Err((
                        delay_decl.span(),
                        "exponential backoff from 0 ms never waits: delay-ms is above 0".into(),
                    ));
                }
                c
            }
            _ => delay_ms,
        };
        let also_retry = match &self.also_retry {
            None => AlsoRetried::NOTHING,
            Some(kinds) => {
                for &k in kinds.get_ref() {
                    if k.is_retryable() || k == RefusalKind::Other {
                        let why = if k == RefusalKind::Other {
                            "an unknown text is an error, never retried".to_owned()
                        } else {
                            format!("D1 says to retry `{k}`, so every policy retries it")
                        };
                        return Err((kinds.span(), format!("also-retry lists `{k}`: {why}")));
                    }
                }
                AlsoRetried::from(kinds.get_ref().clone())
            }
        };
        Ok(RetryPolicy {
            kind,
            max_attempts: n as u32,
            delay_ms,
            cap_ms,
            seed: self.seed.as_ref().map_or(1, |s| *s.get_ref()),
            also_retry,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exponential(base: f64, cap: f64, attempts: u32) -> RetryPolicy {
        RetryPolicy {
            kind: RetryKind::Exponential,
            max_attempts: attempts,
            delay_ms: base,
            cap_ms: cap,
            seed: 7,
            also_retry: AlsoRetried::NOTHING,
        }
    }

    #[test]
    fn a_policy_retries_what_d1_says_and_what_it_opts_in_to() {
        let plain = exponential(10.0, 100.0, 3);
        assert!(plain.retries(RefusalKind::NetworkLost));
        assert!(plain.retries(RefusalKind::CodeUpdated));
        assert!(!plain.retries(RefusalKind::Busy));
        assert!(!plain.retries(RefusalKind::Overloaded));
        assert!(!plain.retries(RefusalKind::TooManyVariables));
        let busy = RetryPolicy {
            also_retry: vec![RefusalKind::Busy, RefusalKind::Overloaded].into(),
            ..plain
        };
        assert!(busy.retries(RefusalKind::Busy) && busy.retries(RefusalKind::Overloaded));
        assert!(!busy.retries(RefusalKind::QueryTimeout));
        assert_eq!(
            busy.also_retry.kinds(),
            [RefusalKind::Overloaded, RefusalKind::Busy]
        );
    }

    #[test]
    fn a_policy_recorded_before_d1s_advice_retried_busy_overloaded_and_d1s_clocks() {
        let old = "kind = \"fixed\"\nmax_attempts = 5\ndelay_ms = 20.0\ncap_ms = 20.0\nseed = 1\n";
        let policy: RetryPolicy = toml::from_str(old).unwrap();
        assert_eq!(policy.also_retry, AlsoRetried::before_d1_advice());
        let new = toml::to_string(&RetryPolicy {
            also_retry: vec![RefusalKind::Busy].into(),
            ..policy
        })
        .unwrap();
        assert!(new.contains("also_retry = [\"busy\"]"), "{new}");
        let back: RetryPolicy = toml::from_str(&new).unwrap();
        assert_eq!(back.also_retry.kinds(), [RefusalKind::Busy]);
    }

    #[test]
    fn full_jitter_stays_within_its_doubling_ceiling_and_the_cap() {
        let p = exponential(10.0, 100.0, 8);
        let mut rng = p.rng(1, 0);
        let mut tops = [0.0f64; 8];
        for _ in 0..2000 {
            for attempt in 1..8 {
                let w = p.wait_ms(attempt, &mut rng).unwrap();
                let ceiling = (10.0 * 2f64.powi(attempt as i32 - 1)).min(100.0);
                assert!((0.0..=ceiling).contains(&w), "attempt {attempt}: {w}");
                tops[attempt as usize] = tops[attempt as usize].max(w);
            }
        }
        // Full jitter reaches near its ceiling: 10, 20, 40, 80, then the cap of 100.
        for (attempt, ceiling) in [
            (1, 10.0),
            (2, 20.0),
            (3, 40.0),
            (4, 80.0),
            (5, 100.0),
            (7, 100.0),
        ] {
            assert!(
                tops[attempt] > 0.95 * ceiling,
                "attempt {attempt}: {}",
                tops[attempt]
            );
        }
    }

    #[test]
    fn the_cap_on_attempts_ends_the_schedule() {
        let mut rng = fastrand::Rng::with_seed(1);
        let p = exponential(10.0, 100.0, 3);
        assert!(p.wait_ms(1, &mut rng).is_some());
        assert!(p.wait_ms(2, &mut rng).is_some());
        assert_eq!(p.wait_ms(3, &mut rng), None);
        let fixed = RetryPolicy {
            kind: RetryKind::Fixed,
            max_attempts: 2,
            delay_ms: 25.0,
            cap_ms: 25.0,
            seed: 1,
            also_retry: AlsoRetried::NOTHING,
        };
        assert_eq!(fixed.wait_ms(1, &mut rng), Some(25.0));
        assert_eq!(fixed.wait_ms(2, &mut rng), None);
        assert_eq!(RetryPolicy::NONE.wait_ms(1, &mut rng), None);
    }

    #[test]
    fn the_jitter_repeats_from_its_seed_and_differs_per_request() {
        let p = exponential(10.0, 1000.0, 6);
        let draw = |seq| {
            let mut rng = p.rng(3, seq);
            (1..6)
                .map(|a| p.wait_ms(a, &mut rng).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(5), draw(5));
        assert_ne!(draw(5), draw(6));
    }
}
