//! The README's generated sections, in one place: which sections there are, the markers around
//! each, how one is replaced, and what each must read as the committed files give it (the
//! parity tables under `reports/`, the example run under `docs/example-run`, the example
//! workloads under `docs/example-workloads`, the two-Worker run). [`parity`], [`findings`],
//! [`workload_findings`] and [`instrument`] write the sections' text and know nothing of the README; the tests here
//! fail when the README and the committed files disagree.

pub mod findings;
pub mod instrument;
#[cfg(test)]
mod links;
pub mod workload_findings;

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow, bail};

use crate::paths::Paths;
use crate::studies::ladder::report::parity;

/// The committed sweep the findings section quotes, relative to the project's root.
pub const EXAMPLE_RUN: &str = "docs/example-run";
/// A second, independent run of the same experiment at the same commit: the findings state a
/// difference only where both show it.
pub const REPLICATE_RUN: &str = "docs/runs/column-sweep-replicate";

/// A generated section of the README.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// "Local and production": the limits parity table, from `reports/parity-*.csv`.
    Parity,
    /// The sweep's findings, from [`EXAMPLE_RUN`] and its replicate [`REPLICATE_RUN`].
    Findings,
    /// The workloads' figures, from the runs under `docs/example-workloads`.
    Workloads,
    /// The instrument's cost, from the two-Worker run [`instrument::TWO_WORKERS`].
    Instrument,
}

impl Section {
    /// Every section, in the order the README is rewritten.
    pub const ALL: [Section; 4] = [
        Section::Parity,
        Section::Findings,
        Section::Workloads,
        Section::Instrument,
    ];

    /// The markers the section's text stands between.
    pub fn markers(self) -> (&'static str, &'static str) {
        match self {
            Section::Parity => ("<!-- parity:begin -->", "<!-- parity:end -->"),
            Section::Findings => ("<!-- findings:begin -->", "<!-- findings:end -->"),
            Section::Workloads => ("<!-- workloads:begin -->", "<!-- workloads:end -->"),
            Section::Instrument => ("<!-- instrument:begin -->", "<!-- instrument:end -->"),
        }
    }

    /// The section's text as the committed files under `paths.root` give it.
    pub fn expected(self, paths: &Paths) -> Result<String> {
        match self {
            Section::Parity => parity::expected_section(paths),
            Section::Findings => findings::section(
                &paths.root.join(EXAMPLE_RUN),
                EXAMPLE_RUN,
                Some((&paths.root.join(REPLICATE_RUN), REPLICATE_RUN)),
            ),
            Section::Workloads => workload_findings::section(&paths.root),
            Section::Instrument => instrument::section(&paths.root),
        }
    }

    /// `readme` with the text between this section's markers replaced by `text`.
    pub fn replace(self, readme: &str, text: &str) -> Result<String> {
        let (begin, end) = self.markers();
        let start = readme
            .find(begin)
            .ok_or_else(|| anyhow!("README.md has no `{begin}` marker"))?;
        let stop = readme
            .find(end)
            .ok_or_else(|| anyhow!("README.md has no `{end}` marker"))?;
        if stop < start {
            bail!("README.md's `{end}` comes before `{begin}`");
        }
        Ok(format!(
            "{}{begin}\n{text}{}",
            &readme[..start],
            &readme[stop..]
        ))
    }
}

/// `readme` with every generated section as the committed files give it.
pub fn regenerated(readme: &str, paths: &Paths) -> Result<String> {
    let mut readme = readme.to_owned();
    for section in Section::ALL {
        readme = section.replace(&readme, &section.expected(paths)?)?;
    }
    Ok(readme)
}

/// Rewrites every generated section of the project's README.md; returns its path.
pub fn rewrite(paths: &Paths) -> Result<PathBuf> {
    let path = paths.root.join("README.md");
    let readme = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    std::fs::write(&path, regenerated(&readme, paths)?)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::project_root;

    #[test]
    fn the_section_between_the_markers_is_replaced_and_nothing_else() {
        let (begin, end) = Section::Parity.markers();
        let readme = format!("a\n{begin}\nold\n{end}\nb\n");
        assert_eq!(
            Section::Parity.replace(&readme, "new\n").unwrap(),
            format!("a\n{begin}\nnew\n{end}\nb\n")
        );
        assert!(Section::Parity.replace("no markers", "x").is_err());
        let backwards = format!("{end}\n{begin}\n");
        assert!(Section::Parity.replace(&backwards, "x").is_err());
    }

    /// The README says what the committed files say, section by section, so a failure names
    /// the files to look at.
    fn assert_readme_holds(section: Section, files: &str) {
        let paths = Paths::new(project_root());
        let readme = std::fs::read_to_string(paths.root.join("README.md")).unwrap();
        let expected = section.expected(&paths).unwrap();
        assert!(
            section.replace(&readme, &expected).unwrap() == readme,
            "README.md's {section:?} section differs from {files}: run `cargo xtask parity-readme` \
             to write it"
        );
    }

    /// The README's table is exactly what the committed tables of real runs say.
    #[test]
    fn the_readme_parity_section_matches_the_committed_tables() {
        assert_readme_holds(Section::Parity, "reports/parity-*.csv");
    }

    #[test]
    fn the_readme_states_the_example_runs_findings_as_its_files_give_them() {
        assert_readme_holds(Section::Findings, "docs/example-run's files");
    }

    #[test]
    fn the_readme_states_the_instruments_cost_as_the_two_worker_run_gives_it() {
        assert_readme_holds(Section::Instrument, "docs/runs/two-workers");
    }

    #[test]
    fn the_readme_states_the_example_workloads_as_their_files_give_them() {
        assert_readme_holds(Section::Workloads, "docs/example-workloads");
    }
}
