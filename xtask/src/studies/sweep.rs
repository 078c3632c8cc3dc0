//! Experiment files (`experiments/<name>.toml`): their schema, their validation with
//! `file:line:column` errors, and their expansion into the probes a run sends.
//!
//! A file has a description, the swept axis, and profiles (`full`, `smoke`, ...). A profile
//! sends each point `warmup` times unrecorded, then `repeats` times measured, in rounds whose
//! order is shuffled from its `order-seed` ([`super::schedule`]); its series are products of
//! strategies × columns × row sizes × escape shares × NUL shares × non-ASCII shares × index
//! counts (each a list) at a row count. Every probe is also checked by the core's own
//! validation, so a file cannot ask for a probe the Worker would refuse, and a row size below
//! what its columns take is refused at the value. Every point of a chart must be one set of
//! parameters, so a chart never mixes two, and be drawn once: a list that repeats a value, a
//! series that repeats another, or two series drawing one point would run its probes twice.
//!
//! Past 600 lines of code: the schema, its validation and its expansion into points change
//! together whenever an axis is added (every axis is a list, checked, then expanded). Split the
//! validation (`check_series`, `check_repeats` and the point checks of `parse`) into a module
//! of its own before the next axis.

use std::collections::BTreeMap;

use std::num::NonZeroUsize;
use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use d1bench_core::generate::{INTEGER_BYTES, RowGenerator, integer_columns};
use d1bench_core::probe::{MAX_PROBE_COLUMNS, MAX_PROBE_INDEXES, MAX_PROBE_ROWS};
use d1bench_core::{ProbeRequest, Strategy, TextMix};
use serde::Deserialize;
use toml::Spanned;

use super::files::{NonEmpty, Profiles, located, toml_stems};
use super::schedule::{PlannedPoint, SweepPlan, Until};

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
pub struct ExperimentFile {
    /// One line saying what the experiment measures (shown by `cargo xtask list`).
    pub description: String,
    /// The swept parameter: the x axis of the charts.
    pub x_axis: Axis,
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
    /// Repetitions of every point sent before the measured ones and not recorded as results:
    /// they warm the target's caches and code paths.
    #[serde(default)]
    pub warmup: usize,
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

/// The most measured repetitions of a point: the intervals of `reports::stats` are computed
/// from at most this many values.
pub const MAX_REPEATS: usize = 1_000;

/// Below this many repeats no order-statistic interval of a median covers 95% (see
/// `reports::stats`), so no precision can be reached.
pub const FEWEST_REPEATS_FOR_95: usize = 6;

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
    pub columns: List<Columns>,
    pub row_bytes: List<usize>,
    pub rows: Rows,
    /// Overrides the planner's rows per statement (bound and literal only).
    #[serde(default)]
    pub rows_per_statement: Option<NonZeroUsize>,
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
pub struct Experiment {
    pub name: String,
    pub path: PathBuf,
    /// The file's text as read (hashed into run.toml).
    pub source: String,
    pub file: ExperimentFile,
}

/// One probe of a run, with where it sits in the experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedProbe {
    /// Index of its point in [`SweepPlan::points`].
    pub point: usize,
    pub series: usize,
    /// The series' label, empty when it has none.
    pub label: String,
    /// A warm-up probe: sent and reconciled, not recorded as a result.
    pub warmup: bool,
    /// Repetition of the point, from 0 (warm-ups and measured ones counted apart).
    pub repeat: usize,
    pub request: ProbeRequest,
}

/// The experiment names in `dir`: file stems of `*.toml`, without the ladder files
/// ([`super::ladder`]), sorted.
pub fn names(dir: &Path) -> Result<Vec<String>> {
    Ok(toml_stems(dir)?
        .into_iter()
        .filter(|name| !super::ladder::is_ladder_file(&dir.join(format!("{name}.toml"))))
        .filter(|name| !super::workload::is_workload_file(&dir.join(format!("{name}.toml"))))
        .collect())
}

impl Experiment {
    /// Loads `<dir>/<name>.toml`; an unknown name lists the ones that exist.
    pub fn load(dir: &Path, name: &str) -> Result<Self> {
        let path = dir.join(format!("{name}.toml"));
        if !path.exists() {
            let known = names(dir)?;
            bail!(
                "no experiment named `{name}` in {}; the experiments are: {}",
                dir.display(),
                known.join(", ")
            );
        }
        let source = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        Self::parse(name, &path, source)
    }

    /// Parses and validates an experiment file's text; errors name `path:line:column`.
    pub fn parse(name: &str, path: &Path, source: String) -> Result<Self> {
        let file: ExperimentFile = toml::from_str(&source)
            .map_err(|e| anyhow!(located(path, &source, e.span(), e.message())))?;
        let experiment = Experiment {
            name: name.to_owned(),
            path: path.to_owned(),
            source,
            file,
        };
        experiment.profiles().check_default()?;
        let axis = experiment.file.x_axis;
        for profile in experiment.file.profile.values() {
            experiment.check_repeats(profile)?;
            // Each line of a chart (strategy and label) at each x: the probe that draws it.
            let mut points: BTreeMap<(Strategy, String, u64), (usize, ProbeRequest)> =
                BTreeMap::new();
            for (index, series) in profile.series.0.iter().enumerate() {
                experiment.check_series(series.get_ref())?;
                let earlier = &profile.series.0[..index];
                if let Some(first) = earlier.iter().position(|s| s == series) {
                    return Err(anyhow!(experiment.error_at(
                        Some(series.span()),
                        &format!(
                            "series {} repeats series {} exactly: every probe would run twice; \
                             remove one or change its label",
                            index + 1,
                            first + 1
                        )
                    )));
                }
                // Repeats and warm-ups of a point are the same probe: one per strategy stands
                // for them all.
                let planned = expand_series(series.get_ref(), profile, index);
                let probes = planned.iter().flat_map(|point| {
                    let label = &point.label;
                    let strategies = point.strategies.iter();
                    strategies.map(move |s| (label, point.probe(*s, 0)))
                });
                for (label, request) in probes {
                    let request = &request;
                    if let Err(e) = request.validate() {
                        return Err(anyhow!(experiment.error_at(
                            Some(series.span()),
                            &format!("a probe of this series is invalid: {e}")
                        )));
                    }
                    let x = axis.of_probe(request);
                    let key = (request.strategy, label.clone(), x.to_bits());
                    let point = (index, probe_point(request));
                    let Some((other, drawn)) = points.get(&key) else {
                        points.insert(key, point);
                        continue;
                    };
                    let line = line_name(request.strategy, label);
                    let at = format!("{} = {}", axis.name(), axis.format(x));
                    let message = match (*other == index, *drawn == point.1) {
                        (true, true) => format!(
                            "this series draws {line} at {at} twice with the same parameters \
                             ({}): its probes would run twice; remove the repeated value",
                            describe(drawn)
                        ),
                        (false, true) => format!(
                            "this series and series {} both draw {line} at {at} with the same \
                             parameters ({}): its probes would run twice; remove the point from \
                             one of them or give the series different labels",
                            other + 1,
                            describe(drawn)
                        ),
                        (same_series, false) => {
                            let (who, remedy) = if same_series {
                                (
                                    "this series draws".to_owned(),
                                    "split the series and give the parts different labels",
                                )
                            } else {
                                (
                                    format!("this series and series {} both draw", other + 1),
                                    "give the series different labels",
                                )
                            };
                            format!(
                                "{who} {line} at {at} with different parameters ({}; then {}): \
                                 a chart would mix them, as only `{}` may vary along a line; \
                                 {remedy}",
                                describe(drawn),
                                describe(&point.1),
                                axis.name(),
                            )
                        }
                    };
                    return Err(anyhow!(experiment.error_at(Some(series.span()), &message)));
                }
            }
        }
        Ok(experiment)
    }

    /// `repeats` at most [`MAX_REPEATS`]; `precision` and `max-repeats` together, and
    /// `max-repeats` not below `repeats`.
    fn check_repeats(&self, profile: &Profile) -> Result<()> {
        let repeats = profile.repeats.get_ref().get();
        let fail = |span, message: String| Err(anyhow!(self.error_at(Some(span), &message)));
        if repeats > MAX_REPEATS {
            return fail(
                profile.repeats.span(),
                format!("repeats must be 1 to {MAX_REPEATS}, got {repeats}"),
            );
        }
        match (&profile.precision, &profile.max_repeats) {
            (Some(precision), None) => fail(
                precision.span(),
                format!(
                    "`precision` needs `max-repeats`: the most repeats a point may take to get \
                     its interval within ±{}% of the median",
                    precision.get_ref().0 * 100.0
                ),
            ),
            (None, Some(max)) => fail(
                max.span(),
                "`max-repeats` applies only with `precision`; for a fixed number of repeats, \
                 give `repeats` alone"
                    .to_owned(),
            ),
            (Some(_), Some(max)) if max.get_ref().0 < repeats => fail(
                max.span(),
                format!(
                    "max-repeats ({}) is below repeats ({repeats}): every point takes `repeats` \
                     before its precision is checked, then more up to `max-repeats`",
                    max.get_ref().0
                ),
            ),
            _ => Ok(()),
        }
    }

    fn error_at(&self, span: Option<Range<usize>>, message: &str) -> String {
        located(&self.path, &self.source, span, message)
    }

    /// What is wrong with one series on its own: a list that repeats a value (its points would
    /// be drawn twice), or a row size below what its columns take (rows would be bigger than
    /// the file says).
    fn check_series(&self, series: &Series) -> Result<()> {
        let repeat = first_repeat(&series.strategies)
            .map(|v| ("strategies", v.span()))
            .or_else(|| first_repeat(&series.columns).map(|v| ("columns", v.span())))
            .or_else(|| first_repeat(&series.row_bytes).map(|v| ("row-bytes", v.span())))
            .or_else(|| first_repeat(&series.escape_share).map(|v| ("escape-share", v.span())))
            .or_else(|| first_repeat(&series.nul_share).map(|v| ("nul-share", v.span())))
            .or_else(|| {
                first_repeat(&series.non_ascii_share).map(|v| ("non-ascii-share", v.span()))
            })
            .or_else(|| first_repeat(&series.indexes).map(|v| ("indexes", v.span())));
        if let Some((key, span)) = repeat {
            let value = &self.source[span.clone()];
            return Err(anyhow!(self.error_at(
                Some(span),
                &format!(
                    "`{key}` lists {value} twice: the series would draw the same points twice, \
                     running each of their probes twice; remove one"
                )
            )));
        }
        let widest = values(&series.columns)
            .map(|Columns(c)| c)
            .max()
            .unwrap_or(1);
        let least = RowGenerator::min_row_bytes(widest);
        for row_bytes in &series.row_bytes.0 {
            let asked = *row_bytes.get_ref();
            let message = if asked == 0 {
                "row-bytes = 0 asks for rows without payload, which measure nothing; a row \
                 must be at least 1 byte"
                    .to_owned()
            } else if asked < least {
                let integers = integer_columns(widest);
                format!(
                    "row-bytes = {asked} is below what {widest} columns take (at least {least} \
                     bytes: {} of {INTEGER_BYTES} bytes each, while the {} can be empty); rows \
                     would be written at {least} bytes, not {asked}",
                    count(integers, "integer column"),
                    count(widest - integers, "text column"),
                )
            } else {
                continue;
            };
            return Err(anyhow!(self.error_at(Some(row_bytes.span()), &message)));
        }
        Ok(())
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

    /// What `profile` runs: its points, repeats and order seed.
    pub fn plan(&self, profile: &Profile) -> SweepPlan {
        SweepPlan {
            points: (profile.series.0.iter().enumerate())
                .flat_map(|(index, series)| expand_series(series.get_ref(), profile, index))
                .collect(),
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
        }
    }

    /// Every probe of `profile` in the order it runs, numbered from 1 (see
    /// [`super::schedule`]).
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
                                text: TextMix {
                                    escape_share,
                                    nul_share,
                                    non_ascii_share,
                                },
                                indexes,
                                debug_corrupt: None,
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
mod tests {
    use super::*;
    use crate::paths::project_root;

    fn golden_dir() -> PathBuf {
        project_root().join("xtask/tests/bad-experiments")
    }

    /// Every `bad-experiments/*.toml` fails with exactly the text in its `.err` file.
    #[test]
    fn bad_experiment_files_fail_with_their_golden_error() {
        let checked = crate::studies::files::check_golden_errors(&golden_dir(), Experiment::parse);
        assert!(checked >= 8, "only {checked} golden files");
    }

    #[test]
    fn every_shipped_experiment_parses_and_has_a_smoke_profile() {
        let dir = project_root().join("experiments");
        let names = names(&dir).unwrap();
        assert!(names.contains(&"column-sweep".to_owned()));
        for name in names {
            let experiment = Experiment::load(&dir, &name).unwrap();
            let (_, smoke) = experiment.profile(Some("smoke")).unwrap();
            assert!(!experiment.probes(smoke).is_empty());
            let (_, default) = experiment.profile(None).unwrap();
            assert!(!experiment.probes(default).is_empty());
        }
    }

    #[test]
    fn every_axis_is_a_list_and_every_point_gets_its_warmups_then_its_repeats() {
        let source = r#"
description = "d"
x-axis = "escape-share"
[profile.full]
repeats = 2
warmup = 1
[[profile.full.series]]
strategies = ["bound", "literal"]
columns = [4]
row-bytes = [100]
rows = 10
escape-share = [0, 0.5]
indexes = [2]
[[profile.full.series]]
label = "all non-ASCII"
strategies = ["literal"]
columns = [4]
row-bytes = [100]
rows = 10
escape-share = [1]
non-ascii-share = [1]
"#;
        let experiment = Experiment::parse("t", Path::new("t.toml"), source.into()).unwrap();
        let (_, profile) = experiment.profile(None).unwrap();
        let probes = experiment.probes(profile);
        let ids: Vec<u64> = probes.iter().map(|p| p.request.probe_id).collect();
        assert_eq!(ids, (1..=15).collect::<Vec<u64>>());
        // The warm-up round first, then the measured rounds: the order within each round is
        // shuffled (see schedule.rs), so compare each round as a set.
        let round = |probes: &[PlannedProbe]| {
            let mut round: Vec<_> = probes
                .iter()
                .map(|p| {
                    (
                        p.warmup,
                        p.repeat,
                        p.request.strategy.name(),
                        p.request.text.escape_share.to_string(),
                        p.request.text.non_ascii_share.to_string(),
                        p.request.indexes,
                        p.label.clone(),
                    )
                })
                .collect();
            round.sort();
            round
        };
        let expected = |warmup: bool, repeat: usize| {
            let mut round: Vec<_> = [
                ("bound", "0", "0", 2, ""),
                ("literal", "0", "0", 2, ""),
                ("bound", "0.5", "0", 2, ""),
                ("literal", "0.5", "0", 2, ""),
                ("literal", "1", "1", 0, "all non-ASCII"),
            ]
            .map(|(s, e, n, i, l)| (warmup, repeat, s, e.into(), n.into(), i, l.to_owned()))
            .to_vec();
            round.sort();
            round
        };
        assert_eq!(round(&probes[..5]), expected(true, 0));
        assert_eq!(round(&probes[5..10]), expected(false, 0));
        assert_eq!(round(&probes[10..]), expected(false, 1));
    }

    #[test]
    fn nul_share_is_an_axis_of_its_own_and_defaults_to_none() {
        let source = r#"
description = "d"
x-axis = "nul-share"
[profile.full]
repeats = 1
[[profile.full.series]]
strategies = ["literal"]
columns = [4]
row-bytes = [100]
rows = 10
escape-share = [0.5]
nul-share = [0, 0.25, 1]
"#;
        let experiment = Experiment::parse("t", Path::new("t.toml"), source.into()).unwrap();
        let (_, profile) = experiment.profile(None).unwrap();
        // The round's order is shuffled (see schedule.rs): compare it as a set.
        let probes = experiment.probes(profile);
        let mut texts: Vec<(f64, f64)> = probes
            .iter()
            .map(|p| (p.request.text.escape_share, p.request.text.nul_share))
            .collect();
        texts.sort_by(|a, b| a.1.total_cmp(&b.1));
        assert_eq!(texts, [(0.5, 0.0), (0.5, 0.25), (0.5, 1.0)]);
        let quarter = probes
            .iter()
            .find(|p| p.request.text.nul_share == 0.25)
            .unwrap();
        assert_eq!(Axis::NulShare.of_probe(&quarter.request), 0.25);
        // A file without it (every file before it existed) asks for no NUL.
        let old = source.replace("nul-share = [0, 0.25, 1]\n", "");
        let old = old.replace("x-axis = \"nul-share\"", "x-axis = \"escape-share\"");
        let experiment = Experiment::parse("t", Path::new("t.toml"), old).unwrap();
        let (_, profile) = experiment.profile(None).unwrap();
        assert!(
            experiment
                .probes(profile)
                .iter()
                .all(|p| p.request.text.nul_share == 0.0)
        );
        let repeated = source.replace("[0, 0.25, 1]", "[0, 1, 1]");
        let err = Experiment::parse("t", Path::new("t.toml"), repeated)
            .unwrap_err()
            .to_string();
        assert!(err.contains("`nul-share` lists 1 twice"), "{err}");
    }

    /// A file of one `full` profile (2 repeats, 1 warm-up) with these series, on `columns`.
    fn parse_series(series: &str) -> Result<Experiment> {
        let source = format!(
            "description = \"d\"\nx-axis = \"columns\"\n[profile.full]\nrepeats = 2\n\
             warmup = 1\n{series}"
        );
        Experiment::parse("t", Path::new("t.toml"), source)
    }

    #[test]
    fn rows_as_small_as_their_columns_allow_parse_and_smaller_ones_do_not() {
        let series = |row_bytes: usize| {
            format!(
                "[[profile.full.series]]\nstrategies = [\"bound\"]\ncolumns = [2, 50]\n\
                 row-bytes = [{row_bytes}]\nrows = 10\n"
            )
        };
        parse_series(&series(128)).unwrap();
        let err = parse_series(&series(127)).unwrap_err().to_string();
        assert!(
            err.contains("row-bytes = 127 is below what 50 columns take (at least 128 bytes"),
            "{err}"
        );
    }

    #[test]
    fn repeats_are_refused_wherever_they_hide() {
        let err = parse_series(
            "[[profile.full.series]]\nstrategies = [\"bound\", \"literal\", \"bound\"]\n\
             columns = [8]\nrow-bytes = [100]\nrows = 10\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("`strategies` lists \"bound\" twice"), "{err}");
        assert!(err.contains("t.toml:7:35:"), "{err}");
        // The same probes with the lists in another order: not the same text, the same points.
        let err = parse_series(
            "[[profile.full.series]]\nstrategies = [\"bound\"]\ncolumns = [1, 8]\n\
             row-bytes = [100]\nrows = 10\n\
             [[profile.full.series]]\nstrategies = [\"bound\"]\ncolumns = [8, 1]\n\
             row-bytes = [100]\nrows = 10\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("this series and series 1 both draw bound at columns = 8 with the same"),
            "{err}"
        );
        // A label tells two series apart even when they run the same probes.
        parse_series(
            "[[profile.full.series]]\nstrategies = [\"bound\"]\ncolumns = [1, 8]\n\
             row-bytes = [100]\nrows = 10\n\
             [[profile.full.series]]\nlabel = \"again\"\nstrategies = [\"bound\"]\n\
             columns = [1, 8]\nrow-bytes = [100]\nrows = 10\n",
        )
        .unwrap();
    }

    #[test]
    fn an_unknown_experiment_lists_the_known_ones() {
        let err = Experiment::load(&project_root().join("experiments"), "colum-sweep")
            .unwrap_err()
            .to_string();
        assert!(err.contains("no experiment named `colum-sweep`"), "{err}");
        assert!(err.contains("column-sweep"), "{err}");
    }

    #[test]
    fn an_unknown_profile_lists_the_known_ones() {
        let experiment =
            Experiment::load(&project_root().join("experiments"), "column-sweep").unwrap();
        let err = experiment.profile(Some("quick")).unwrap_err().to_string();
        assert!(
            err.contains("no profile `quick`") && err.contains("smoke"),
            "{err}"
        );
    }

    #[test]
    fn the_order_seed_is_a_profile_key_with_a_fixed_default() {
        let source = |seed: &str| {
            format!(
                "description = \"d\"\nx-axis = \"columns\"\n[profile.full]\nrepeats = 3\n{seed}\n\
                 [[profile.full.series]]\nstrategies = [\"bound\", \"literal\"]\n\
                 columns = [1, 2, 4, 8, 16]\nrow-bytes = [100]\nrows = 10\n"
            )
        };
        let order = |seed: &str| {
            let experiment = Experiment::parse("t", Path::new("t.toml"), source(seed)).unwrap();
            let (_, profile) = experiment.profile(None).unwrap();
            let plan = experiment.plan(profile);
            let probes: Vec<_> = experiment
                .probes(profile)
                .iter()
                .map(|p| (p.request.columns, p.request.strategy))
                .collect();
            (plan.order_seed, probes)
        };
        let (default, fixed) = order("");
        assert_eq!(default, 1);
        assert_eq!(order("order-seed = 1").1, fixed);
        let (seven, shuffled) = order("order-seed = 7");
        assert_eq!(seven, 7);
        assert_ne!(shuffled, fixed);
        assert_eq!(shuffled.len(), 5 * 2 * 3);
    }
}
