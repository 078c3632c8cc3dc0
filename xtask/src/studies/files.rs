//! What experiment and ladder files share: the list of files, required non-empty lists, the
//! choice of a profile, and errors that point at `file:line:column` with the offending line.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use serde::{Deserialize, Deserializer};
use toml::Spanned;

/// The profile run when none is named.
const DEFAULT_PROFILE: &str = "full";

/// `<dir>/<name>.toml`: its path and its text.
pub fn read_study(dir: &Path, name: &str) -> Result<(PathBuf, String)> {
    let path = dir.join(format!("{name}.toml"));
    let source = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok((path, source))
}

/// `source`, the text of the TOML file at `path`, deserialized; a syntax or schema error names
/// `path:line:column` with the offending line.
pub fn parse_toml<T: serde::de::DeserializeOwned>(path: &Path, source: &str) -> Result<T> {
    toml::from_str(source).map_err(|e| anyhow!(located(path, source, e.span(), e.message())))
}

/// Whether the TOML file at `path` has the top-level key `key` (how a ladder file, which has
/// `ladder`, and a workload file, which has `table`, are told from an experiment file).
pub fn declares(path: &Path, key: &str) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
        .is_some_and(|table| table.contains_key(key))
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

/// A list that must hold at least one value.
#[derive(Debug, Clone, PartialEq)]
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

/// The profiles of an experiment or ladder file and the one it names as default: the choice
/// of a profile works the same for both kinds of file.
pub struct Profiles<'a, P> {
    pub path: &'a Path,
    pub source: &'a str,
    pub profiles: &'a BTreeMap<String, P>,
    pub default: Option<&'a Spanned<String>>,
}

impl<'a, P> Profiles<'a, P> {
    /// The profile names, comma-separated, for error messages.
    pub fn names(&self) -> String {
        self.profiles
            .keys()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// An error at the file's `default-profile` when it names no profile of the file.
    pub fn check_default(&self) -> Result<()> {
        match self.default {
            Some(default) if !self.profiles.contains_key(default.get_ref()) => {
                Err(anyhow!(located(
                    self.path,
                    self.source,
                    Some(default.span()),
                    &format!(
                        "no profile named `{}`; the profiles are: {}",
                        default.get_ref(),
                        self.names()
                    )
                )))
            }
            _ => Ok(()),
        }
    }

    /// The profile named `name`, else the file's default, else `full`.
    pub fn select(&self, name: Option<&str>) -> Result<(&'a str, &'a P)> {
        let name = name
            .or(self.default.map(|d| d.get_ref().as_str()))
            .unwrap_or(DEFAULT_PROFILE);
        self.profiles
            .get_key_value(name)
            .map(|(k, v)| (k.as_str(), v))
            .ok_or_else(|| {
                anyhow!(
                    "{} has no profile `{name}`; its profiles are: {}",
                    self.path.display(),
                    self.names()
                )
            })
    }
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

/// Parses every `<dir>/*.toml` with `parse` and checks that it fails with exactly the text of
/// its `.err` file beside it (`UPDATE_GOLDEN=1` rewrites them); how many files it checked.
#[cfg(test)]
pub fn check_golden_errors<T: std::fmt::Debug>(
    dir: &Path,
    parse: impl Fn(&str, &Path, String) -> Result<T>,
) -> usize {
    let mut checked = 0;
    for name in toml_stems(dir).unwrap() {
        let path = Path::new("experiments").join(format!("{name}.toml"));
        let source = std::fs::read_to_string(dir.join(format!("{name}.toml"))).unwrap();
        let err = parse(&name, &path, source).expect_err(&name).to_string();
        let golden = dir.join(format!("{name}.err"));
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(&golden, format!("{err}\n")).unwrap();
        }
        let expected = std::fs::read_to_string(&golden)
            .unwrap_or_else(|_| panic!("{} is missing", golden.display()));
        assert_eq!(err.trim_end(), expected.trim_end(), "{name}");
        checked += 1;
    }
    checked
}
