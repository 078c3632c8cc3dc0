//! Experiment files (`experiments/<name>.toml`): their schema, their validation with
//! `file:line:column` errors, and their expansion into the probes a run sends.
//!
//! A file has a description, the swept axis, and profiles (`full`, `smoke`, ...). A profile
//! repeats each point `repeats` times; its series are products of strategies × columns ×
//! row sizes at a row count. Every probe is also checked by the core's own validation, so a
//! file cannot ask for a probe the Worker would refuse.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::num::NonZeroUsize;
use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow, bail};
use d1bench_core::probe::{MAX_PROBE_COLUMNS, MAX_PROBE_ROWS};
use d1bench_core::{ProbeRequest, Strategy, TextMix};
use serde::{Deserialize, Deserializer};
use toml::Spanned;

use crate::report::Axis;

/// The profile run when none is named.
const DEFAULT_PROFILE: &str = "full";

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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Profile {
    /// Measured repetitions of every point.
    pub repeats: NonZeroUsize,
    /// Seed of the row generator (the same data for every strategy).
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub series: NonEmpty<Spanned<Series>>,
}

fn default_seed() -> u64 {
    1
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Series {
    pub strategies: NonEmpty<Strategy>,
    pub columns: NonEmpty<Columns>,
    pub row_bytes: NonEmpty<usize>,
    pub rows: Rows,
    /// Overrides the planner's rows per statement (bound and literal only).
    #[serde(default)]
    pub rows_per_statement: Option<NonZeroUsize>,
    #[serde(default)]
    pub text: TextMix,
}

/// A list that must hold at least one value.
#[derive(Debug, Clone)]
pub struct NonEmpty<T>(pub Vec<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for NonEmpty<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let values = Vec::<T>::deserialize(deserializer)?;
        if values.is_empty() {
            return Err(serde::de::Error::custom("must list at least one value"));
        }
        Ok(NonEmpty(values))
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
    pub series: usize,
    pub repeat: usize,
    pub request: ProbeRequest,
}

/// The stems of every `*.toml` in `dir` (experiments and ladders alike), sorted.
pub fn toml_stems(dir: &Path) -> Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            (path.extension()? == "toml").then(|| path.file_stem()?.to_str().map(str::to_owned))?
        })
        .collect();
    names.sort();
    Ok(names)
}

/// The experiment names in `dir`: file stems of `*.toml`, without the ladder files
/// ([`crate::ladder`]), sorted.
pub fn names(dir: &Path) -> Result<Vec<String>> {
    Ok(toml_stems(dir)?
        .into_iter()
        .filter(|name| !crate::ladder::is_ladder_file(&dir.join(format!("{name}.toml"))))
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
        if let Some(default) = &experiment.file.default_profile
            && !experiment.file.profile.contains_key(default.get_ref())
        {
            return Err(anyhow!(experiment.error_at(
                Some(default.span()),
                &format!(
                    "no profile named `{}`; the profiles are: {}",
                    default.get_ref(),
                    experiment.profile_names()
                )
            )));
        }
        for profile in experiment.file.profile.values() {
            for series in &profile.series.0 {
                for probe in expand_series(series.get_ref(), profile, 0, 0) {
                    if let Err(e) = probe.request.validate() {
                        return Err(anyhow!(experiment.error_at(
                            Some(series.span()),
                            &format!("a probe of this series is invalid: {e}")
                        )));
                    }
                }
            }
        }
        Ok(experiment)
    }

    fn profile_names(&self) -> String {
        self.file
            .profile
            .keys()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn error_at(&self, span: Option<Range<usize>>, message: &str) -> String {
        located(&self.path, &self.source, span, message)
    }

    /// The profile named `name`, or the file's default.
    pub fn profile(&self, name: Option<&str>) -> Result<(&str, &Profile)> {
        let name = name
            .or(self
                .file
                .default_profile
                .as_ref()
                .map(|d| d.get_ref().as_str()))
            .unwrap_or(DEFAULT_PROFILE);
        self.file
            .profile
            .get_key_value(name)
            .map(|(k, v)| (k.as_str(), v))
            .ok_or_else(|| {
                anyhow!(
                    "{} has no profile `{name}`; its profiles are: {}",
                    self.path.display(),
                    self.profile_names()
                )
            })
    }

    /// Every probe of `profile`, numbered from 1. Within a point the repeats and the strategies
    /// interleave, so slow drift of the machine spreads evenly over the strategies.
    pub fn probes(&self, profile: &Profile) -> Vec<PlannedProbe> {
        let mut probes = Vec::new();
        for (index, series) in profile.series.0.iter().enumerate() {
            probes.extend(expand_series(
                series.get_ref(),
                profile,
                index,
                probes.len() as u64,
            ));
        }
        probes
    }
}

fn expand_series(
    series: &Series,
    profile: &Profile,
    index: usize,
    first_id: u64,
) -> Vec<PlannedProbe> {
    let mut probes = Vec::new();
    for &Columns(columns) in &series.columns.0 {
        for &row_bytes in &series.row_bytes.0 {
            for repeat in 0..profile.repeats.get() {
                for &strategy in &series.strategies.0 {
                    let probe_id = first_id + probes.len() as u64 + 1;
                    probes.push(PlannedProbe {
                        series: index,
                        repeat,
                        request: ProbeRequest {
                            probe_id,
                            strategy,
                            columns,
                            rows: series.rows.0,
                            row_bytes,
                            seed: profile.seed,
                            rows_per_statement: series.rows_per_statement.map(NonZeroUsize::get),
                            text: series.text,
                        },
                    });
                }
            }
        }
    }
    probes
}

/// `path:line:column: message`, then the offending line with a caret under the column.
pub(crate) fn located(
    path: &Path,
    source: &str,
    span: Option<Range<usize>>,
    message: &str,
) -> String {
    let message = message.trim_end();
    let Some(span) = span else {
        return format!("{}: {message}", path.display());
    };
    let start = span.start.min(source.len());
    let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = source[start..]
        .find('\n')
        .map_or(source.len(), |i| start + i);
    let line_number = source[..start].matches('\n').count() + 1;
    let column = source[line_start..start].chars().count() + 1;
    let text = &source[line_start..line_end];
    let gutter = " ".repeat(line_number.to_string().len());
    let width = source[start..span.end.min(line_end).max(start)]
        .chars()
        .count()
        .max(1);
    let mut out = format!("{}:{line_number}:{column}: {message}\n", path.display());
    writeln!(out, "{gutter} |").unwrap();
    writeln!(out, "{line_number} | {text}").unwrap();
    write!(
        out,
        "{gutter} | {}{}",
        " ".repeat(column - 1),
        "^".repeat(width)
    )
    .unwrap();
    out
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
        let dir = golden_dir();
        let mut checked = 0;
        for name in names(&dir).unwrap() {
            let path = Path::new("experiments").join(format!("{name}.toml"));
            let source = std::fs::read_to_string(dir.join(format!("{name}.toml"))).unwrap();
            let err = Experiment::parse(&name, &path, source)
                .expect_err(&name)
                .to_string();
            let golden = dir.join(format!("{name}.err"));
            if std::env::var_os("UPDATE_GOLDEN").is_some() {
                std::fs::write(&golden, format!("{err}\n")).unwrap();
            }
            let expected = std::fs::read_to_string(&golden)
                .unwrap_or_else(|_| panic!("{} is missing", golden.display()));
            assert_eq!(err.trim_end(), expected.trim_end(), "{name}");
            checked += 1;
        }
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
    fn probes_interleave_strategies_and_number_from_one() {
        let source = r#"
description = "d"
x-axis = "columns"
[profile.full]
repeats = 2
[[profile.full.series]]
strategies = ["bound", "literal"]
columns = [1, 8]
row-bytes = [100]
rows = 10
[[profile.full.series]]
strategies = ["per-row"]
columns = [4]
row-bytes = [100]
rows = 3
"#;
        let experiment = Experiment::parse("t", Path::new("t.toml"), source.into()).unwrap();
        let (_, profile) = experiment.profile(None).unwrap();
        let probes = experiment.probes(profile);
        let summary: Vec<_> = probes
            .iter()
            .map(|p| {
                (
                    p.request.probe_id,
                    p.series,
                    p.request.columns,
                    p.repeat,
                    p.request.strategy.name(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (1, 0, 1, 0, "bound"),
                (2, 0, 1, 0, "literal"),
                (3, 0, 1, 1, "bound"),
                (4, 0, 1, 1, "literal"),
                (5, 0, 8, 0, "bound"),
                (6, 0, 8, 0, "literal"),
                (7, 0, 8, 1, "bound"),
                (8, 0, 8, 1, "literal"),
                (9, 1, 4, 0, "per-row"),
                (10, 1, 4, 1, "per-row"),
            ]
        );
    }
}
