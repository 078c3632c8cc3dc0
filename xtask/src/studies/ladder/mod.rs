//! Ladder files (`experiments/<ladder>.toml`): their schema, their validation with
//! `file:line:column` errors, and the climbs their entries plan (the values a climb tries:
//! geometric growth or an explicit list). Which rung comes next given those so far, and what a
//! climb found, is `sequence.rs`; sending the rungs is `climb.rs`, their cost `cost.rs`.
//!
//! A ladder file is told from an experiment file by its top-level `ladder` key, which names the
//! core ladder ([`LadderKind`]) it climbs.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};
use d1bench_core::ladder::{CallMode, Held, LadderKind, MAX_STEPS_PER_MS, RungRequest, TextKind};
use d1bench_core::limits::{MAX_COLUMNS, MAX_STRING_BYTES};
use serde::{Deserialize, Deserializer};
use toml::Spanned;

pub mod climb;
pub mod cost;
pub mod dialect;
pub mod kind;
pub mod report;
pub mod row;
pub mod sequence;

pub use sequence::{Climber, Role, Verdict};

use super::files::{NonEmpty, Profiles, located, toml_stems};
use crate::base::numbers::thousands;

/// The profile run when neither `--profile` nor `default-profile` names one.

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LadderFile {
    /// The core ladder this file climbs.
    pub ladder: LadderKind,
    /// One line saying what the ladder finds (shown by `cargo xtask list`).
    pub description: String,
    #[serde(default)]
    pub default_profile: Option<Spanned<String>>,
    pub profile: BTreeMap<String, Profile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Profile {
    pub climb: NonEmpty<Spanned<ClimbSpec>>,
    /// The Worker's `limits.subrequests` a remote run deploys it with (1 to 10,000,000; the
    /// plan's default when unset): a query-budget profile sets it to see whether it moves D1's
    /// budget.
    #[serde(default)]
    pub worker_subrequests: Option<Spanned<i64>>,
}

/// The most `limits.subrequests` a Worker may be configured with (the Workers changelog of
/// 2026-02-11).
pub const MAX_WORKER_SUBREQUESTS: i64 = 10_000_000;

impl Profile {
    /// The Worker's `limits.subrequests` this profile sets, validated at parse time.
    pub fn subrequests(&self) -> Option<u32> {
        self.worker_subrequests
            .as_ref()
            .map(|n| *n.get_ref() as u32)
    }
}

/// One entry of a profile: how to climb, and what to hold fixed (one climb per held value).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ClimbSpec {
    pub rungs: Rungs,
    /// Rungs past the first refusal that must refuse too (the next values of the climb).
    #[serde(default = "default_confirm")]
    pub confirm: usize,
    #[serde(default)]
    pub held: HeldSpec,
    /// Stop climbing (and say so) once the climb's rungs took this long in all.
    #[serde(default)]
    pub max_seconds: Option<u64>,
    /// Recursive-CTE steps of the calibration rung that sizes query-duration's queries.
    #[serde(default)]
    pub calibrate_steps: Option<u64>,
    /// Read only to be refused with a reason: a sweep's cap on json's payloads has no place in
    /// a ladder, whose rungs say what it sends (json-payload climbs past the documented limit).
    #[serde(default)]
    pub json_payload_bytes: Option<Spanned<usize>>,
}

fn default_confirm() -> usize {
    1
}

/// What a climb holds fixed; `columns` may list several values, one climb each.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct HeldSpec {
    #[serde(default)]
    pub columns: Option<ColumnsSpec>,
    #[serde(default)]
    pub mode: Option<CallMode>,
    #[serde(default)]
    pub batches: Option<usize>,
    #[serde(default)]
    pub text: Option<TextKind>,
}

/// Column counts: one, a list, or every count in `{ from = 1, to = 100 }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnsSpec(pub Vec<usize>);

impl<'de> Deserialize<'de> for ColumnsSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = toml::Value::deserialize(deserializer)?;
        let expected = "a column count, a list of them, or { from = 1, to = 100 }";
        let count = |v: &toml::Value| -> Result<usize, String> {
            match v.as_integer().map(usize::try_from) {
                Some(Ok(c)) if (1..=MAX_COLUMNS).contains(&c) => Ok(c),
                _ => Err(format!(
                    "a column count must be 1 to {MAX_COLUMNS}, got {v}"
                )),
            }
        };
        let columns = match &value {
            toml::Value::Integer(_) => vec![count(&value)],
            toml::Value::Array(items) if !items.is_empty() => items.iter().map(count).collect(),
            toml::Value::Table(t)
                if t.len() == 2 && t.contains_key("from") && t.contains_key("to") =>
            {
                let (from, to) = (count(&t["from"]), count(&t["to"]));
                match (from, to) {
                    (Ok(from), Ok(to)) if from <= to => (from..=to).map(Ok).collect(),
                    (Ok(from), Ok(to)) => vec![Err(format!("`from` {from} is above `to` {to}"))],
                    (Err(e), _) | (_, Err(e)) => vec![Err(e)],
                }
            }
            other => vec![Err(format!("expected {expected}, got {other}"))],
        };
        columns
            .into_iter()
            .collect::<Result<Vec<_>, _>>()
            .map(ColumnsSpec)
            .map_err(serde::de::Error::custom)
    }
}

/// The values a climb tries.
#[derive(Debug, Clone, PartialEq)]
pub enum Rungs {
    /// Exactly these values, in this order, until the first refusal (and its confirmations).
    List(Vec<usize>),
    /// `start`, then × `factor` (never past `max`) until the first refusal; then bisection
    /// between the last success and the first refusal until they are `resolution` apart.
    Grow {
        start: usize,
        factor: f64,
        max: usize,
        resolution: usize,
    },
}

impl<'de> Deserialize<'de> for Rungs {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Grow {
            start: usize,
            factor: f64,
            max: usize,
            resolution: usize,
        }
        let value = toml::Value::deserialize(deserializer)?;
        let fail = |m: String| Err(serde::de::Error::custom(m));
        match value {
            toml::Value::Array(items) => {
                let mut values = Vec::new();
                for item in &items {
                    match item.as_integer().map(usize::try_from) {
                        Some(Ok(v)) => values.push(v),
                        _ => return fail(format!("a rung is a non-negative integer, got {item}")),
                    }
                }
                if values.is_empty() {
                    return fail("must list at least one rung".into());
                }
                if values.windows(2).any(|w| w[0] >= w[1]) {
                    return fail("rungs must climb: each larger than the one before".into());
                }
                Ok(Rungs::List(values))
            }
            toml::Value::Table(table) => {
                let g: Grow = table.try_into().map_err(|e: toml::de::Error| {
                    serde::de::Error::custom(format!(
                        "{}; growing rungs are {{ start, factor, max, resolution }}",
                        e.message().trim_end()
                    ))
                })?;
                if !(g.factor > 1.0 && g.factor <= 1_000.0) {
                    return fail(format!("`factor` must be above 1, got {}", g.factor));
                }
                if g.start == 0 || g.start > g.max {
                    return fail(format!(
                        "`start` must be at least 1 and at most `max` ({}), got {}",
                        g.max, g.start
                    ));
                }
                if g.resolution == 0 {
                    return fail("`resolution` must be at least 1".into());
                }
                Ok(Rungs::Grow {
                    start: g.start,
                    factor: g.factor,
                    max: g.max,
                    resolution: g.resolution,
                })
            }
            other => fail(format!(
                "rungs are a list of values or {{ start, factor, max, resolution }}, got {other}"
            )),
        }
    }
}

impl Rungs {
    /// The climbing sequence, in order (before any bisection).
    pub fn sequence(&self) -> Vec<usize> {
        match *self {
            Rungs::List(ref values) => values.clone(),
            Rungs::Grow {
                start, factor, max, ..
            } => {
                let mut values = vec![start];
                let mut v = start;
                while v < max {
                    v = ((v as f64 * factor).ceil() as usize).clamp(v + 1, max);
                    values.push(v);
                }
                values
            }
        }
    }

    fn resolution(&self) -> Option<usize> {
        match self {
            Rungs::List(_) => None,
            Rungs::Grow { resolution, .. } => Some(*resolution),
        }
    }

    /// The most bisection rungs a climb may take after its first refusal: a list takes none; a
    /// growing climb halves the widest gap of its sequence (keeping the larger half, as
    /// [`Climber`] may) until it is `resolution` wide.
    pub fn most_bisections(&self) -> usize {
        let Some(resolution) = self.resolution() else {
            return 0;
        };
        let steps = |mut gap: usize| {
            let mut n = 0;
            while gap > resolution.max(1) {
                gap -= gap / 2;
                n += 1;
            }
            n
        };
        self.sequence()
            .windows(2)
            .map(|w| steps(w[1] - w[0]))
            .max()
            .unwrap_or(0)
    }

    /// The planned climbing sequence, in thousands, and the bisection's resolution if any:
    /// `1,000, 2,000, 4,000, then bisection to 1`.
    pub fn label(&self) -> String {
        let values: Vec<String> = self.sequence().into_iter().map(thousands).collect();
        match self.resolution() {
            None => values.join(", "),
            Some(r) => format!("{}, then bisection to {}", values.join(", "), thousands(r)),
        }
    }

    /// The largest value the climb may try.
    pub fn max(&self) -> usize {
        self.sequence().last().copied().unwrap_or(0)
    }
}

/// The name that runs every ladder and writes the parity table.
pub const LIMITS: &str = "limits";

/// A loaded, validated ladder file.
#[derive(Debug)]
pub struct Ladder {
    pub name: String,
    pub path: PathBuf,
    pub source: String,
    pub file: LadderFile,
}

/// One climb of a run: a ladder entry with one value of everything it holds fixed.
#[derive(Debug, Clone, PartialEq)]
pub struct Climb {
    pub ladder: LadderKind,
    pub rungs: Rungs,
    pub confirm: usize,
    pub held: Held,
    pub max_seconds: Option<u64>,
    pub calibrate_steps: Option<u64>,
}

/// Whether the TOML file at `path` is a ladder file (it has a top-level `ladder` key).
pub fn is_ladder_file(path: &Path) -> bool {
    super::files::declares(path, "ladder")
}

impl Ladder {
    pub fn load(dir: &Path, name: &str) -> Result<Self> {
        let (path, source) = super::files::read_study(dir, name)?;
        Self::parse(name, &path, source)
    }

    /// Parses and validates a ladder file's text; errors name `path:line:column`.
    pub fn parse(name: &str, path: &Path, source: String) -> Result<Self> {
        let file: LadderFile = super::files::parse_toml(path, &source)?;
        let ladder = Ladder {
            name: name.to_owned(),
            path: path.to_owned(),
            source,
            file,
        };
        ladder.profiles().check_default()?;
        for (profile_name, profile) in &ladder.file.profile {
            let dialect = dialect::Dialect::of_profile(profile_name);
            if let Some(n) = &profile.worker_subrequests
                && !(1..=MAX_WORKER_SUBREQUESTS).contains(n.get_ref())
            {
                let message = format!(
                    "worker-subrequests is the Worker's limits.subrequests: 1 to {}, not {}",
                    thousands(MAX_WORKER_SUBREQUESTS as usize),
                    n.get_ref()
                );
                return Err(anyhow!(ladder.error_at(Some(n.span()), &message)));
            }
            for spec in &profile.climb.0 {
                if let Some(bytes) = &spec.get_ref().json_payload_bytes {
                    let message = json_payload_bytes_refused(ladder.file.ladder, *bytes.get_ref());
                    return Err(anyhow!(ladder.error_at(Some(bytes.span()), &message)));
                }
                if let Err(message) = ladder.check(spec.get_ref(), dialect) {
                    return Err(anyhow!(ladder.error_at(Some(spec.span()), &message)));
                }
            }
        }
        Ok(ladder)
    }

    /// Every rung a climb could send must be one the core accepts (core-pg, for a `postgres-`
    /// profile).
    fn check(&self, spec: &ClimbSpec, dialect: dialect::Dialect) -> Result<(), String> {
        let kind = self.file.ladder;
        match (kind, spec.calibrate_steps) {
            (LadderKind::QueryDuration, None) => {
                return Err("query-duration needs `calibrate-steps` (recursive-CTE steps of the calibration rung)".into());
            }
            (LadderKind::QueryDuration, Some(s)) if s == 0 || s > MAX_STEPS_PER_MS => {
                return Err(format!(
                    "`calibrate-steps` must be 1 to {MAX_STEPS_PER_MS}, got {s}"
                ));
            }
            (LadderKind::QueryDuration, Some(_)) => {}
            (_, Some(_)) => {
                return Err(format!("{kind} takes no `calibrate-steps`; leave it unset"));
            }
            (_, None) => {}
        }
        for climb in self.expand(spec) {
            for value in climb.rungs.sequence() {
                let rung = climb.rung(1, value);
                if let Err(e) = dialect.validate(&rung) {
                    return Err(format!("a rung of this climb is invalid: {e}"));
                }
            }
        }
        Ok(())
    }

    fn error_at(&self, span: Option<Range<usize>>, message: &str) -> String {
        located(&self.path, &self.source, span, message)
    }

    fn profiles(&self) -> Profiles<'_, Profile> {
        Profiles {
            path: &self.path,
            source: &self.source,
            profiles: &self.file.profile,
            default: self.file.default_profile.as_ref(),
        }
    }

    /// The profile named `name`, or the file's default.
    pub fn profile(&self, name: Option<&str>) -> Result<(&str, &Profile)> {
        self.profiles().select(name)
    }

    /// The profile a target of `dialect` climbs when asked for `name` (or the default): on
    /// Postgres the file's `postgres-<name>` when it has one ([`dialect`]).
    pub fn profile_in(
        &self,
        name: Option<&str>,
        dialect: dialect::Dialect,
    ) -> Result<(&str, &Profile)> {
        let (asked, _) = self.profile(name)?;
        let chosen = dialect.profile_name(asked, |p| self.file.profile.contains_key(p));
        self.profiles().select(Some(&chosen))
    }

    /// Every climb of `profile`, in file order; a list of column counts gives one climb each.
    pub fn climbs(&self, profile: &Profile) -> Vec<Climb> {
        profile
            .climb
            .0
            .iter()
            .flat_map(|spec| self.expand(spec.get_ref()))
            .collect()
    }

    fn expand(&self, spec: &ClimbSpec) -> Vec<Climb> {
        let columns: Vec<Option<usize>> = match &spec.held.columns {
            Some(ColumnsSpec(list)) => list.iter().copied().map(Some).collect(),
            None => vec![None],
        };
        columns
            .into_iter()
            .map(|columns| Climb {
                ladder: self.file.ladder,
                rungs: spec.rungs.clone(),
                confirm: spec.confirm,
                held: Held {
                    columns,
                    mode: spec.held.mode,
                    batches: spec.held.batches,
                    text: spec.held.text,
                    steps_per_ms: spec.calibrate_steps.map(|_| 1),
                },
                max_seconds: spec.max_seconds,
                calibrate_steps: spec.calibrate_steps,
            })
            .collect()
    }
}

/// Why a ladder file's `json-payload-bytes` is refused: above D1's documented string limit it
/// would plan past a documented limit; at or below it, it has nothing to cap in a ladder.
fn json_payload_bytes_refused(ladder: LadderKind, bytes: usize) -> String {
    let climb = if ladder == LadderKind::JsonPayload {
        "json-payload climbs past it with its rungs (up to 64 MiB), not with an override"
    } else {
        "a ladder's rungs say what it sends"
    };
    if bytes > MAX_STRING_BYTES {
        format!(
            "json-payload-bytes = {bytes} is above D1's documented {}-byte string limit: no \
             file may raise a documented limit (local D1 accepts more, production does not); \
             {climb}",
            thousands(MAX_STRING_BYTES)
        )
    } else {
        format!(
            "json-payload-bytes caps json's payloads in a sweep; a ladder has no such cap \
             ({climb}): leave it unset"
        )
    }
}

impl Climb {
    pub fn rung(&self, rung_id: u64, value: usize) -> RungRequest {
        RungRequest {
            rung_id,
            ladder: self.ladder,
            value,
            held: self.held,
        }
    }
}

/// The ladder names in `dir`, sorted.
pub fn names(dir: &Path) -> Result<Vec<String>> {
    Ok(toml_stems(dir)?
        .into_iter()
        .filter(|name| is_ladder_file(&dir.join(format!("{name}.toml"))))
        .collect())
}

#[cfg(test)]
mod tests;
