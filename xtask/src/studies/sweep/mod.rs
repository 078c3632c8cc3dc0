//! Experiment files (`experiments/<name>.toml`): their schema, their validation with
//! `file:line:column` errors, and their expansion into the probes a run sends.
//!
//! A file has a description, the swept axis, and profiles (`full`, `smoke`, ...). A profile
//! sends each point `warmup` times unrecorded, then `repeats` times measured, in rounds whose
//! order is shuffled from its `order-seed` ([`schedule`]); its series are products of
//! strategies × columns × row sizes × escape shares × NUL shares × non-ASCII shares × index
//! counts (each a list) at a row count. Every probe is also checked by the core's own
//! validation, so a file cannot ask for a probe the Worker would refuse, and a row size below
//! what its columns take is refused at the value. Every point of a chart must be one set of
//! parameters, so a chart never mixes two, and be drawn once: a list that repeats a value, a
//! series that repeats another, or two series drawing one point would run its probes twice.
//!
//! A file that also declares a `y-axis` is a grid (the decision map): every series lists both
//! axes, and each cell of the grid is a point of every strategy the series asks for there.
//! The checks past the schema are in [`checks`].
//!
//! A series may also list `orms`: libraries (Drizzle, Prisma, Kysely) whose bulk insert runs at
//! each of its points beside its strategies, in the same shuffled rounds, in the ORM Worker.
//!
//! At about 615 lines before its tests it stays one file: the schema and its expansion into
//! probes are one meaning (each field is read where it is expanded); the checks live in
//! `checks.rs`, the rounds in `schedule.rs` and a probe's row in `row.rs`.

mod checks;
pub mod cost;
pub mod dry_run;
pub mod kind;
pub mod measure;
pub mod report;
pub mod resume;
pub mod row;
pub mod settle;

use std::collections::BTreeMap;

use std::num::NonZeroUsize;
use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::Result;
use d1bench_core::probe::{MAX_PROBE_COLUMNS, MAX_PROBE_INDEXES, MAX_PROBE_ROWS};
use d1bench_core::{ProbeRequest, Strategy, TextMix};
use serde::Deserialize;
use toml::Spanned;

use super::files::{NonEmpty, Profiles};
use crate::base::{Idiom, Orm, OrmWrite};
pub mod schedule;

pub use schedule::PlannedProbe;
use schedule::{PlannedPoint, SweepPlan, Until};

/// The swept parameter of an experiment: the x axis of its charts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Axis {
    Columns,
    RowBytes,
    EscapeShare,
    NulShare,
    NonAsciiShare,
    Indexes,
}

impl Axis {
    /// The name used in TOML files and chart file names.
    pub fn name(self) -> &'static str {
        match self {
            Axis::Columns => "columns",
            Axis::RowBytes => "row-bytes",
            Axis::EscapeShare => "escape-share",
            Axis::NulShare => "nul-share",
            Axis::NonAsciiShare => "non-ascii-share",
            Axis::Indexes => "indexes",
        }
    }

    /// The axis label of a chart, with its unit.
    pub fn label(self) -> &'static str {
        match self {
            Axis::Columns => "columns per row",
            Axis::RowBytes => "row size (bytes)",
            Axis::EscapeShare => "share of text values needing escapes (0-1)",
            Axis::NulShare => "share of text values holding a NUL (0-1)",
            Axis::NonAsciiShare => "share of non-ASCII text values (0-1)",
            Axis::Indexes => "secondary indexes on the table",
        }
    }

    /// This axis's value in a probe.
    pub fn of_probe(self, probe: &ProbeRequest) -> f64 {
        match self {
            Axis::Columns => probe.columns as f64,
            Axis::RowBytes => probe.row_bytes as f64,
            Axis::EscapeShare => probe.text.escape_share,
            Axis::NulShare => probe.text.nul_share,
            Axis::NonAsciiShare => probe.text.non_ascii_share,
            Axis::Indexes => probe.indexes as f64,
        }
    }

    /// This axis's value as a table shows it.
    pub fn format(self, value: f64) -> String {
        match self {
            Axis::EscapeShare | Axis::NulShare | Axis::NonAsciiShare => format!("{value}"),
            _ => format!("{}", value as u64),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SweepFile {
    /// One line saying what the experiment measures (shown by `cargo xtask list`).
    pub description: String,
    /// The swept parameter: the x axis of the charts.
    pub x_axis: Axis,
    /// The second swept parameter of a grid (the decision map): its rows.
    #[serde(default)]
    pub y_axis: Option<Spanned<Axis>>,
    /// The profile `cargo xtask run` uses without `--profile`.
    #[serde(default)]
    pub default_profile: Option<Spanned<String>>,
    pub profile: BTreeMap<String, Profile>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Profile {
    /// Measured repetitions of every point; with `precision`, the fewest.
    pub repeats: Spanned<NonZeroUsize>,
    /// Repeat each point until its median's 95% interval lies within ± this fraction of the
    /// median (`0.05`: ±5%), from `repeats` up to `max-repeats` repetitions.
    #[serde(default)]
    pub precision: Option<Spanned<Precision>>,
    /// The most measured repetitions of a point, with `precision`.
    #[serde(default)]
    pub max_repeats: Option<Spanned<MaxRepeats>>,
    /// Probes sent at the start of every session before any other, to wake a fresh target (its
    /// runtime's code paths, SQLite's caches): the first this many of one more shuffled round.
    /// Recorded in results.csv as warm-ups (`warmup`) and left out of every figure; the summary
    /// says how much slower they and the first measured probes were than the rest, so a run
    /// shows whether its warm-up was enough.
    #[serde(default)]
    pub warmup_probes: usize,
    /// Repetitions of every point sent before the measured ones (after the warm-up probes),
    /// recorded as warm-ups like them (in every session).
    #[serde(default)]
    pub warmup: usize,
    /// Sessions: each a fresh target (a new `wrangler dev` and database, a new database
    /// remotely or in-process) with its own warm-ups and `repeats` measured rounds; the
    /// baseline's sessions alternate with the target's. The intervals of the reports are taken
    /// over sessions when there are two or more.
    #[serde(default)]
    pub sessions: Sessions,
    /// Seed of the row generator (the same data for every strategy).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Seed of the shuffled order the probes run in (recorded in run.toml).
    #[serde(default = "default_seed")]
    pub order_seed: u64,
    pub series: NonEmpty<Spanned<Series>>,
}

fn default_seed() -> u64 {
    1
}

/// The most measured repetitions of a point: the intervals of `stats::order` are computed
/// from at most this many values.
pub const MAX_REPEATS: usize = 1_000;

/// Below this many repeats no order-statistic interval of a median covers 95% (see
/// `stats::order`), so no precision can be reached.
pub const FEWEST_REPEATS_FOR_95: usize = 6;

/// Most sessions a profile (or `--sessions`) may ask for.
pub const MAX_SESSIONS: usize = 100;

/// How many sessions a profile takes: 1 to [`MAX_SESSIONS`], 1 when the profile does not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "i64")]
pub struct Sessions(pub usize);

impl Default for Sessions {
    fn default() -> Self {
        Sessions(1)
    }
}

impl TryFrom<i64> for Sessions {
    type Error = String;
    fn try_from(n: i64) -> Result<Self, String> {
        match usize::try_from(n) {
            Ok(s) if (1..=MAX_SESSIONS).contains(&s) => Ok(Sessions(s)),
            _ => Err(format!(
                "sessions must be 1 to {MAX_SESSIONS} (each a fresh target with its own \
                 warm-ups and repeats), got {n}"
            )),
        }
    }
}

/// A precision: the interval's half-width as a fraction of the median, above 0 and below 1.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "f64")]
pub struct Precision(pub f64);

impl TryFrom<f64> for Precision {
    type Error = String;
    fn try_from(x: f64) -> Result<Self, String> {
        if x > 0.0 && x < 1.0 {
            Ok(Precision(x))
        } else {
            Err(format!(
                "a precision is a fraction of the median above 0 and below 1 (0.05: the \
                 interval within ±5% of the median), got {x}"
            ))
        }
    }
}

/// The most repetitions a point may take to reach a precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "i64")]
pub struct MaxRepeats(pub usize);

impl TryFrom<i64> for MaxRepeats {
    type Error = String;
    fn try_from(n: i64) -> Result<Self, String> {
        match usize::try_from(n) {
            Ok(m) if (FEWEST_REPEATS_FOR_95..=MAX_REPEATS).contains(&m) => Ok(MaxRepeats(m)),
            _ => Err(format!(
                "max-repeats must be {FEWEST_REPEATS_FOR_95} to {MAX_REPEATS} (below \
                 {FEWEST_REPEATS_FOR_95} repeats no interval of a median covers 95%, so no \
                 precision can be reached), got {n}"
            )),
        }
    }
}

/// A series' list of values, each with its place in the file.
pub type List<T> = NonEmpty<Spanned<T>>;

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Series {
    /// Names the series' lines in charts and tables (`bound, all non-ASCII`); series without
    /// one share the strategy's plain line.
    #[serde(default)]
    pub label: Option<Label>,
    pub strategies: List<Strategy>,
    /// Libraries whose bulk insert runs beside the strategies at every point of the series
    /// (`drizzle`, `prisma`, `kysely`), in the ORM Worker (`--worker js-orm`) only.
    #[serde(default)]
    pub orms: Option<List<Orm>>,
    /// How each of `orms` is asked to write: `documented` (the default: its documented bulk
    /// insert) and `json-each` (its raw-SQL API sending the `json` strategy's statement).
    #[serde(default)]
    pub idioms: Option<List<Idiom>>,
    pub columns: List<Columns>,
    pub row_bytes: List<usize>,
    pub rows: Rows,
    /// Overrides the planner's rows per statement (not for per-row and batched-rows).
    #[serde(default)]
    pub rows_per_statement: Option<NonZeroUsize>,
    /// Caps the bytes of one json statement's payload, at most the documented string limit.
    #[serde(default)]
    pub json_payload_bytes: Option<Spanned<usize>>,
    /// Shares of text values generated with characters that need escaping (NUL apart).
    #[serde(default = "zero_share")]
    pub escape_share: List<Share>,
    /// Shares of text values generated starting with a NUL.
    #[serde(default = "zero_share")]
    pub nul_share: List<Share>,
    /// Shares of text values generated with multi-byte characters.
    #[serde(default = "zero_share")]
    pub non_ascii_share: List<Share>,
    /// Secondary index counts of the probe's table.
    #[serde(default = "no_indexes")]
    pub indexes: List<Indexes>,
}

impl Series {
    /// Whether the file writes the list of `axis` (a left-out list has its one default value).
    fn lists(&self, axis: Axis) -> bool {
        let written = |span: Range<usize>| span != (0..0);
        match axis {
            Axis::Columns => written(self.columns.0[0].span()),
            Axis::RowBytes => written(self.row_bytes.0[0].span()),
            Axis::EscapeShare => written(self.escape_share.0[0].span()),
            Axis::NulShare => written(self.nul_share.0[0].span()),
            Axis::NonAsciiShare => written(self.non_ascii_share.0[0].span()),
            Axis::Indexes => written(self.indexes.0[0].span()),
        }
    }
}

/// The one value of a list the file leaves out. Its span is never shown: errors about a list
/// point at values the file wrote.
fn default_list<T>(value: T) -> List<T> {
    NonEmpty(vec![Spanned::new(0..0, value)])
}

fn zero_share() -> List<Share> {
    default_list(Share(0.0))
}

fn no_indexes() -> List<Indexes> {
    default_list(Indexes(0))
}

/// The values of a list, without their places in the file.
fn values<T: Copy>(list: &List<T>) -> impl Iterator<Item = T> + '_ {
    list.0.iter().map(|value| *value.get_ref())
}

/// Every pair of a value of `a` and one of `b`, `a` the outer: one loop less in the series'
/// product.
fn pairs<'a, A: Copy, B: Copy>(
    a: &'a List<A>,
    b: &'a List<B>,
) -> impl Iterator<Item = (A, B)> + 'a {
    values(a).flat_map(move |x| values(b).map(move |y| (x, y)))
}

/// The first value of a list that an earlier one repeats.
fn first_repeat<T: PartialEq>(list: &List<T>) -> Option<&Spanned<T>> {
    let values = &list.0;
    (1..values.len())
        .find(|&i| values[..i].contains(&values[i]))
        .map(|i| &values[i])
}

/// `1 integer column`, `2 integer columns`.
fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// A series' label: what tells its lines apart from other series of the same strategies.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct Label(pub String);

/// Longest label: it has to fit a chart's legend.
const MAX_LABEL_CHARS: usize = 30;

impl TryFrom<String> for Label {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        let chars = s.chars().count();
        if chars == 0 || chars > MAX_LABEL_CHARS || s.trim() != s || s.chars().any(char::is_control)
        {
            return Err(format!(
                "a label must be 1 to {MAX_LABEL_CHARS} characters, without leading or trailing spaces, got {s:?}"
            ));
        }
        Ok(Label(s))
    }
}

/// A share: a fraction from 0 to 1.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(try_from = "f64")]
pub struct Share(pub f64);

impl TryFrom<f64> for Share {
    type Error = String;
    fn try_from(x: f64) -> Result<Self, String> {
        if (0.0..=1.0).contains(&x) {
            Ok(Share(x))
        } else {
            Err(format!("a share must be from 0 to 1, got {x}"))
        }
    }
}

/// A count of secondary indexes a probe's table can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "i64")]
pub struct Indexes(pub usize);

impl TryFrom<i64> for Indexes {
    type Error = String;
    fn try_from(n: i64) -> Result<Self, String> {
        match usize::try_from(n) {
            Ok(k) if k <= MAX_PROBE_INDEXES => Ok(Indexes(k)),
            _ => Err(format!(
                "an index count must be 0 to {MAX_PROBE_INDEXES}, got {n}"
            )),
        }
    }
}

/// A column count a probe can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "i64")]
pub struct Columns(pub usize);

impl TryFrom<i64> for Columns {
    type Error = String;
    fn try_from(n: i64) -> Result<Self, String> {
        match usize::try_from(n) {
            Ok(c) if (1..=MAX_PROBE_COLUMNS).contains(&c) => Ok(Columns(c)),
            _ => Err(format!(
                "a column count must be 1 to {MAX_PROBE_COLUMNS}, got {n}"
            )),
        }
    }
}

/// A row count a probe can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "i64")]
pub struct Rows(pub usize);

impl TryFrom<i64> for Rows {
    type Error = String;
    fn try_from(n: i64) -> Result<Self, String> {
        match usize::try_from(n) {
            Ok(r) if (1..=MAX_PROBE_ROWS).contains(&r) => Ok(Rows(r)),
            _ => Err(format!(
                "a row count must be 1 to {MAX_PROBE_ROWS}, got {n}"
            )),
        }
    }
}

/// A loaded, validated experiment file.
#[derive(Debug)]
pub struct SweepStudy {
    pub name: String,
    pub path: PathBuf,
    /// The file's text as read (hashed into run.toml).
    pub source: String,
    pub file: SweepFile,
}

impl SweepStudy {
    /// Whether a series runs ORM probes, which only the ORM Worker (`--worker js-orm`) runs.
    pub fn has_orms(&self) -> bool {
        self.file
            .profile
            .values()
            .flat_map(|p| &p.series.0)
            .any(|s| s.get_ref().orms.is_some())
    }

    /// Loads `<dir>/<name>.toml` ([`crate::studies::load`] says which names exist).
    pub fn load(dir: &Path, name: &str) -> Result<Self> {
        let (path, source) = super::files::read_study(dir, name)?;
        Self::parse(name, &path, source)
    }

    /// Parses and validates an experiment file's text; errors name `path:line:column`.
    pub fn parse(name: &str, path: &Path, source: String) -> Result<Self> {
        let file: SweepFile = super::files::parse_toml(path, &source)?;
        let experiment = SweepStudy {
            name: name.to_owned(),
            path: path.to_owned(),
            source,
            file,
        };
        experiment.profiles().check_default()?;
        experiment.check()?;
        Ok(experiment)
    }

    fn profiles(&self) -> Profiles<'_, Profile> {
        Profiles {
            path: &self.path,
            source: &self.source,
            profiles: &self.file.profile,
            default: self.file.default_profile.as_ref(),
        }
    }

    /// The grid's second axis, when the file is a grid.
    pub fn y_axis(&self) -> Option<Axis> {
        self.file.y_axis.as_ref().map(|y| *y.get_ref())
    }

    /// The profile named `name`, or the file's default.
    pub fn profile(&self, name: Option<&str>) -> Result<(&str, &Profile)> {
        self.profiles().select(name)
    }

    /// What `profile` runs: its points, repeats and order seed.
    pub fn plan(&self, profile: &Profile) -> SweepPlan {
        SweepPlan {
            points: (profile.series.0.iter().enumerate())
                .flat_map(|(index, series)| expand_series(series.get_ref(), profile, index))
                .collect(),
            warmup_probes: profile.warmup_probes,
            warmup: profile.warmup,
            repeats: profile.repeats.get_ref().get(),
            until: profile
                .precision
                .as_ref()
                .zip(profile.max_repeats.as_ref())
                .map(|(precision, max)| Until {
                    precision: precision.get_ref().0,
                    max_repeats: max.get_ref().0,
                }),
            order_seed: profile.order_seed,
            sessions: profile.sessions.0,
            workers: Vec::new(),
        }
    }

    /// Every probe of `profile` in the order it runs, numbered from 1 (see
    /// [`schedule`]).
    pub fn probes(&self, profile: &Profile) -> Vec<PlannedProbe> {
        self.plan(profile).probes()
    }
}

/// A probe without what differs between its repeats: the parameters of its point.
fn probe_point(probe: &ProbeRequest) -> ProbeRequest {
    ProbeRequest {
        probe_id: 0,
        ..probe.clone()
    }
}

/// `bound` or `bound (label)`.
fn line_name(strategy: Strategy, label: &str) -> String {
    if label.is_empty() {
        strategy.name().to_owned()
    } else {
        format!("{strategy} ({label})")
    }
}

/// A point's parameters, as an error message shows them.
fn describe(p: &ProbeRequest) -> String {
    format!(
        "columns {}, row-bytes {}, rows {}, escape-share {}, nul-share {}, non-ascii-share {}, \
         indexes {}{}",
        p.columns,
        p.row_bytes,
        p.rows,
        p.text.escape_share,
        p.text.nul_share,
        p.text.non_ascii_share,
        p.indexes,
        p.rows_per_statement
            .map(|n| format!(", rows-per-statement {n}"))
            .unwrap_or_default()
    )
}

/// The points of one series: every combination of its lists, each with the series'
/// strategies.
fn expand_series(series: &Series, profile: &Profile, index: usize) -> Vec<PlannedPoint> {
    let label = series
        .label
        .as_ref()
        .map(|l| l.0.clone())
        .unwrap_or_default();
    let strategies: Vec<Strategy> = values(&series.strategies).collect();
    let idioms: Vec<Idiom> = match &series.idioms {
        Some(list) => values(list).collect(),
        None => vec![Idiom::Documented],
    };
    let orms: Vec<OrmWrite> = (series.orms.iter().flat_map(values))
        .flat_map(|orm| idioms.iter().map(move |&idiom| OrmWrite { orm, idiom }))
        .collect();
    let mut points = Vec::new();
    for Columns(columns) in values(&series.columns) {
        for row_bytes in values(&series.row_bytes) {
            for (Share(escape_share), Share(nul_share)) in
                pairs(&series.escape_share, &series.nul_share)
            {
                for Share(non_ascii_share) in values(&series.non_ascii_share) {
                    for Indexes(indexes) in values(&series.indexes) {
                        points.push(PlannedPoint {
                            series: index,
                            label: label.clone(),
                            strategies: strategies.clone(),
                            orms: orms.clone(),
                            request: ProbeRequest {
                                probe_id: 0,
                                strategy: strategies[0],
                                columns,
                                rows: series.rows.0,
                                row_bytes,
                                seed: profile.seed,
                                rows_per_statement: series
                                    .rows_per_statement
                                    .map(NonZeroUsize::get),
                                json_payload_bytes: series
                                    .json_payload_bytes
                                    .as_ref()
                                    .map(|b| *b.get_ref()),
                                text: TextMix {
                                    escape_share,
                                    nul_share,
                                    non_ascii_share,
                                },
                                indexes,
                                debug_corrupt: None,
                                debug_slow_percent: None,
                            },
                        });
                    }
                }
            }
        }
    }
    points
}

#[cfg(test)]
mod tests;
