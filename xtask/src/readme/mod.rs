//! The generated sections of the README and the docs, in one place: which sections there are,
//! the file each lives in, the markers around each, how one is replaced, and what each must read
//! as the committed files give it (the parity tables under `reports/`, the example run under
//! `docs/example-run`, the example workloads under `docs/example-workloads`, the two-Worker
//! run, the replicate sets of [`replicates`] stated by [`over_runs`], the libraries' run of
//! [`orms`]). [`parity`], [`findings`],
//! [`workload_findings`] and [`instrument`] write the sections' text and know nothing of the
//! files they go into; the tests here fail when a file and the committed runs disagree.

pub mod answer;
pub mod durable;
pub mod findings;
pub mod instrument;
#[cfg(test)]
mod links;
pub mod map_over_runs;
pub mod orms;
pub mod over_runs;
pub mod replicates;
pub mod workload_findings;

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow, bail};

use crate::paths::Paths;
use crate::studies::ladder::report::parity;

/// The committed sweep the findings section quotes, relative to the project's root.
pub const EXAMPLE_RUN: &str = "docs/example-run";
/// A second, independent run of the same experiment with the same Worker build: the findings state a
/// difference only where both show it.
pub const REPLICATE_RUN: &str = "docs/runs/column-sweep-replicate";

/// Every committed run the README quotes: what `cargo xtask reproduce` runs again, and what
/// must have been measured by today's Worker build; with every run of every committed replicate
/// set, [`replicates::quoted_runs`].
pub const QUOTED_RUNS: [&str; 4] = [
    EXAMPLE_RUN,
    REPLICATE_RUN,
    instrument::TWO_WORKERS,
    durable::D1_BESIDE_DO,
];

/// The committed between-runs calibrations, (run a, run b): `cargo xtask calibrate --between a b`
/// wrote `calibration-between-runs.{csv,md}` into b, and `cargo xtask reproduce` makes it again
/// whenever it puts either run in place.
pub const CALIBRATED_PAIRS: [(&str, &str); 1] = [(EXAMPLE_RUN, REPLICATE_RUN)];

/// How long a run measured, in minutes, from its run.toml's start and end.
pub fn run_minutes(record: &crate::records::RunRecord) -> Option<f64> {
    crate::records::replicates::minutes(record)
}

/// The most README.md may hold, in bytes: the long tables live under `docs/`.
pub const README_MAX_BYTES: usize = 12_000;

/// A generated section of the README or of a file under `docs/` ([`Section::file`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The answer first: the decision map over its replicate set and its rule ([`answer`]).
    Answer,
    /// The limits parity table, from `reports/parity-*.csv`.
    Parity,
    /// The sweep's findings, from [`EXAMPLE_RUN`] and its replicate [`REPLICATE_RUN`].
    Findings,
    /// The workloads' figures, from the runs under `docs/example-workloads`.
    Workloads,
    /// The instrument's cost, from the two-Worker run [`instrument::TWO_WORKERS`].
    Instrument,
    /// D1 beside a Durable Object, from [`durable::D1_BESIDE_DO`] and the parity tables.
    Durable,
    /// D1 beside Postgres through Hyperdrive, from [`replicates::D1_BESIDE_POSTGRES`].
    Postgres,
    /// The findings over replicate runs point by point, from the sets of [`replicates::SETS`].
    OverRuns,
    /// The ORMs beside the strategies, from [`orms::ORM_SWEEP`] when it is committed.
    Orms,
}

impl Section {
    /// Every section, in the order the README is rewritten.
    pub const ALL: [Section; 9] = [
        Section::Answer,
        Section::Parity,
        Section::Findings,
        Section::Workloads,
        Section::Instrument,
        Section::Durable,
        Section::Postgres,
        Section::OverRuns,
        Section::Orms,
    ];

    /// The file the section lives in, relative to the project's root. Links in its text are
    /// relative to that file's directory.
    pub fn file(self) -> &'static str {
        match self {
            Section::Parity => "docs/limits.md",
            Section::Answer
            | Section::Findings
            | Section::Instrument
            | Section::Durable
            | Section::Postgres
            | Section::Orms => "README.md",
            Section::Workloads => "docs/workload-findings.md",
            Section::OverRuns => over_runs::DOCUMENT,
        }
    }

    /// The markers the section's text stands between.
    pub fn markers(self) -> (&'static str, &'static str) {
        match self {
            Section::Answer => ("<!-- answer:begin -->", "<!-- answer:end -->"),
            Section::Parity => ("<!-- parity:begin -->", "<!-- parity:end -->"),
            Section::Findings => ("<!-- findings:begin -->", "<!-- findings:end -->"),
            Section::Workloads => ("<!-- workloads:begin -->", "<!-- workloads:end -->"),
            Section::Instrument => ("<!-- instrument:begin -->", "<!-- instrument:end -->"),
            Section::Durable => ("<!-- durable:begin -->", "<!-- durable:end -->"),
            Section::Postgres => ("<!-- postgres:begin -->", "<!-- postgres:end -->"),
            Section::OverRuns => ("<!-- over-runs:begin -->", "<!-- over-runs:end -->"),
            Section::Orms => ("<!-- orms:begin -->", "<!-- orms:end -->"),
        }
    }

    /// The section's text as the committed files under `paths.root` give it: a finding over its
    /// replicate set when one of two runs or more is committed ([`over_runs::sections`]), else
    /// over the one run it quotes.
    pub fn expected(self, paths: &Paths) -> Result<String> {
        let root = &paths.root;
        Ok(match self {
            Section::Answer => answer::section(root)?,
            Section::Parity => parity::expected_section(paths)?,
            Section::Findings => match over_runs::sections::findings(root)? {
                Some(text) => text,
                None => findings::section(
                    &root.join(EXAMPLE_RUN),
                    EXAMPLE_RUN,
                    Some((&root.join(REPLICATE_RUN), REPLICATE_RUN)),
                )?,
            },
            Section::Workloads => workload_findings::section(root)?,
            Section::Instrument => match over_runs::sections::instrument(root)? {
                Some(text) => text,
                None => instrument::section(root)?,
            },
            Section::Durable => match over_runs::sections::durable(root)? {
                Some(text) => text,
                None => durable::section(root)?,
            },
            Section::Postgres => match over_runs::sections::postgres(root)? {
                Some(text) => text,
                None => format!(
                    "**D1 or Postgres through Hyperdrive?** No set of two runs or more is \
                     committed under `{}/` yet: `cargo xtask reproduce --replicates 3 --only {}` \
                     makes one ([the target](docs/targets.md#postgres-through-hyperdrive)).\n",
                    replicates::D1_BESIDE_POSTGRES.dir(),
                    replicates::D1_BESIDE_POSTGRES.name,
                ),
            },
            Section::OverRuns => over_runs::document(root)?,
            Section::Orms => orms::section(root)?,
        })
    }

    /// `content` (of the section's [`file`](Section::file)) with the text between this
    /// section's markers replaced by `text`.
    pub fn replace(self, content: &str, text: &str) -> Result<String> {
        let file = self.file();
        let (begin, end) = self.markers();
        let start = content
            .find(begin)
            .ok_or_else(|| anyhow!("{file} has no `{begin}` marker"))?;
        let stop = content
            .find(end)
            .ok_or_else(|| anyhow!("{file} has no `{end}` marker"))?;
        if stop < start {
            bail!("{file}'s `{end}` comes before `{begin}`");
        }
        Ok(format!(
            "{}{begin}\n{text}{}",
            &content[..start],
            &content[stop..]
        ))
    }
}

/// Every file that holds a generated section, each once, in the order of [`Section::ALL`].
pub fn files() -> Vec<&'static str> {
    let mut files: Vec<&'static str> = Vec::new();
    for section in Section::ALL {
        if !files.contains(&section.file()) {
            files.push(section.file());
        }
    }
    files
}

/// `content` of `file` with every section that lives in it as the committed files give it.
pub fn regenerated(file: &str, content: &str, paths: &Paths) -> Result<String> {
    let mut content = content.to_owned();
    for section in Section::ALL.into_iter().filter(|s| s.file() == file) {
        content = section.replace(&content, &section.expected(paths)?)?;
    }
    Ok(content)
}

/// Rewrites every generated section in the files they live in; returns those files' paths.
pub fn rewrite(paths: &Paths) -> Result<Vec<PathBuf>> {
    // The answer's figure first: the section links to it.
    answer::write_figure(&paths.root)?;
    over_runs::sections::write_figures(&paths.root)?;
    let mut written = Vec::new();
    for file in files() {
        let path = paths.root.join(file);
        let content = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        std::fs::write(&path, regenerated(file, &content, paths)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::project_root;

    /// Whether `record`'s JavaScript Worker is worker-js/ as it is under `root`: its recorded
    /// hash equals today's; a run recorded before the hash was kept (2026-12-06) is today's when
    /// git shows worker-js/ unchanged since the run's commit (a fresh clone has the history).
    fn js_worker_is_todays(root: &std::path::Path, record: &crate::records::RunRecord) -> bool {
        let today = crate::worker_build::js_sources_hash(root).unwrap();
        match &record.versions.worker_js_build {
            Some(hash) => *hash == today,
            None => std::process::Command::new("git")
                .current_dir(root)
                .args(["diff", "--quiet"])
                .arg(record.git.commit.to_string())
                .args(["--", "worker-js"])
                .status()
                .is_ok_and(|s| s.success()),
        }
    }

    #[test]
    fn a_javascript_worker_that_changed_since_a_run_is_seen() {
        let root = project_root();
        let mut record = crate::records::run_record::tests_support::record();
        record.versions.worker_js_build = Some("0".repeat(64));
        assert!(!js_worker_is_todays(&root, &record));
        record.versions.worker_js_build = crate::worker_build::js_sources_hash(&root).ok();
        assert!(js_worker_is_todays(&root, &record));
        // Before the hash was kept: the commit decides. The first commit had no worker-js/.
        record.versions.worker_js_build = None;
        let first = std::process::Command::new("git")
            .current_dir(&root)
            .args(["rev-list", "--max-parents=0", "HEAD"])
            .output()
            .unwrap();
        let first = String::from_utf8(first.stdout).unwrap().trim().to_owned();
        record.git.commit = crate::records::run_record::Commit::Known(first);
        assert!(!js_worker_is_todays(&root, &record));
    }

    #[test]
    fn every_quoted_run_was_measured_by_todays_worker_build_at_a_clean_commit() {
        let root = project_root();
        let manifest = crate::worker_build::Manifest::read(&root)
            .unwrap()
            .expect("worker/build-manifest.toml is committed");
        for dir in replicates::quoted_runs(&root).unwrap() {
            let dir = dir.as_str();
            let record = crate::records::RunRecord::read(&root.join(dir).join("run.toml")).unwrap();
            // Today's sources, or earlier ones shown to build the same bytes (`--carry`).
            let recorded = record.versions.worker_build.as_deref().unwrap_or_default();
            assert!(
                recorded == manifest.sources || manifest.carried.iter().any(|c| c == recorded),
                "{dir} was measured by another Worker build than today's: `cargo xtask \
                 reproduce` runs it again"
            );
            assert_eq!(
                record.versions.worker_wasm.as_ref(),
                manifest.files.get("index_bg.wasm"),
                "{dir} ran other Worker bytes than worker/build's: `cargo xtask reproduce` runs \
                 it again"
            );
            let js_worker = record.run.alternate_workers
                || record.run.paired_workers
                || record
                    .run
                    .worker
                    .is_some_and(|w| w != crate::base::WorkerKind::Rust);
            if js_worker {
                assert!(
                    js_worker_is_todays(&root, &record),
                    "{dir} ran the JavaScript Worker as worker-js/ was then, not as it is: \
                     `cargo xtask reproduce` runs it again"
                );
            }
            let postgres = record.run.target.is_postgres()
                || record.run.baseline.is_some_and(|b| b.is_postgres());
            if postgres {
                // Today's sources, or earlier ones shown to build the same Worker
                // (`build-worker --carry-pg`).
                let which = crate::base::PgWorker::Probes;
                let today = crate::worker_build::pg_sources_hash(&root, which).unwrap();
                let carried = crate::worker_build::carry_pg::PgCarried::read(&root, which).unwrap();
                let recorded = record.versions.worker_pg_build.clone().unwrap_or_default();
                assert!(
                    recorded == today
                        || carried
                            .standing_for(&today, &record.versions.rustc)
                            .contains(&recorded),
                    "{dir} ran the Postgres Worker as worker-pg/ was then, not as it is: \
                     `cargo xtask reproduce` runs it again"
                );
            }
            assert!(
                !record.git.dirty,
                "{dir} ran on a tree with uncommitted changes"
            );
            assert_eq!(
                record.run.status,
                crate::records::RunStatus::Complete,
                "{dir}"
            );
            assert!(run_minutes(&record).is_some(), "{dir}");
        }
    }

    /// Every folder under `docs/runs/replicates/` is a set the README knows, of one design: a
    /// set of mixed runs, or one nothing states, fails here.
    #[test]
    fn every_committed_replicate_set_is_known_and_of_one_design() {
        let root = project_root();
        let parent = root.join(crate::records::replicates::REPLICATES_DIR);
        let Ok(entries) = std::fs::read_dir(&parent) else {
            return; // No set is committed yet: replicates::tests cover the reading.
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let spec = replicates::SETS
                .into_iter()
                .find(|s| s.name == name)
                .unwrap_or_else(|| panic!("{}: not in readme::replicates::SETS", path.display()));
            let set = spec.read(&root).unwrap().unwrap();
            let source =
                crate::records::RunRecord::read(&root.join(spec.source).join("run.toml")).unwrap();
            // A set of another study alone on one target names it; the others repeat source's.
            let experiment = spec
                .alone_on
                .map_or(source.run.experiment, |(e, _)| e.to_owned());
            assert_eq!(
                set.runs[0].record.run.experiment, experiment,
                "{name} repeats {}'s experiment",
                spec.source
            );
            if let Some((_, target)) = spec.alone_on {
                assert_eq!(set.runs[0].record.run.target, target, "{name}");
                assert_eq!(set.runs[0].record.run.baseline, None, "{name}");
            }
        }
    }

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

    /// The section's file says what the committed files say, section by section, so a failure
    /// names the files to look at.
    fn assert_readme_holds(section: Section, files: &str) {
        let paths = Paths::new(project_root());
        let file = section.file();
        let content = std::fs::read_to_string(paths.root.join(file)).unwrap();
        let expected = section.expected(&paths).unwrap();
        assert!(
            section.replace(&content, &expected).unwrap() == content,
            "{file}'s {section:?} section differs from {files}: run `cargo xtask parity-readme` \
             to write it"
        );
    }

    /// Each section's markers are in its own file, once, and in no other file a reader might
    /// take for the generated text: a stale copy left behind fails.
    #[test]
    fn each_section_is_in_its_own_file_only() {
        let root = project_root();
        let mut candidates = vec!["README.md".to_owned()];
        for entry in std::fs::read_dir(root.join("docs")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md") {
                let name = path.file_name().unwrap().to_str().unwrap();
                candidates.push(format!("docs/{name}"));
            }
        }
        for section in Section::ALL {
            let (begin, end) = section.markers();
            for candidate in &candidates {
                let content = std::fs::read_to_string(root.join(candidate)).unwrap();
                let expected = usize::from(candidate == section.file());
                for marker in [begin, end] {
                    assert_eq!(
                        content.matches(marker).count(),
                        expected,
                        "{candidate} should hold `{marker}` {expected} time(s): the {section:?} \
                         section lives in {}",
                        section.file()
                    );
                }
            }
        }
    }

    /// The README stays short: what is long lives under `docs/`.
    #[test]
    fn the_readme_is_at_most_its_size() {
        let bytes = std::fs::metadata(project_root().join("README.md"))
            .unwrap()
            .len();
        assert!(
            bytes <= README_MAX_BYTES as u64,
            "README.md is {bytes} bytes, more than {README_MAX_BYTES}: move what is long into docs/"
        );
    }

    /// The parity table is exactly what the committed tables of real runs say.
    #[test]
    fn the_limits_parity_section_matches_the_committed_tables() {
        assert_readme_holds(Section::Parity, "reports/parity-*.csv");
    }

    #[test]
    fn the_readme_leads_with_the_decision_map_as_its_replicate_set_gives_it() {
        assert_readme_holds(Section::Answer, "docs/runs/replicates/decision-map");
        // In its first 40 lines.
        let readme = std::fs::read_to_string(project_root().join("README.md")).unwrap();
        let (begin, end) = Section::Answer.markers();
        let line_of = |m: &str| readme[..readme.find(m).unwrap()].lines().count();
        assert!(
            line_of(begin) < 40 && line_of(end) <= 40,
            "the answer is past line 40"
        );
        // Its figure and table are what the sets' runs give, byte for byte.
        let root = project_root();
        let sets = root.join(crate::records::replicates::REPLICATES_DIR);
        let set = sets.join(answer::SET);
        if !set.is_dir() {
            return;
        }
        let copy = tempfile::tempdir().unwrap();
        let copied = copy.path().join(crate::records::replicates::REPLICATES_DIR);
        let beside = answer::BESIDE_SETS.map(|(name, _)| name);
        for name in std::iter::once(answer::SET).chain(beside) {
            if !sets.join(name).is_dir() {
                continue;
            }
            for entry in walk(&sets.join(name)) {
                let dest = copied
                    .join(name)
                    .join(entry.strip_prefix(sets.join(name)).unwrap());
                std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
                std::fs::copy(&entry, &dest).unwrap();
            }
        }
        let to = copied.join(answer::SET);
        for name in ["decision-map.csv", "decision-map.svg"] {
            let _ = std::fs::remove_file(to.join(name));
        }
        answer::write_figure(copy.path()).unwrap();
        for name in ["decision-map.csv", "decision-map.svg"] {
            assert_eq!(
                std::fs::read(to.join(name)).unwrap(),
                std::fs::read(set.join(name)).unwrap_or_default(),
                "{}/{name} is not what the set's runs give: `cargo xtask parity-readme`",
                set.display()
            );
        }
    }

    /// Every file under `dir`.
    fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
        out
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
    fn the_findings_over_runs_state_the_committed_replicate_sets() {
        assert_readme_holds(Section::OverRuns, "docs/runs/replicates/");
    }

    #[test]
    fn the_readme_states_the_orms_as_their_committed_run_gives_them() {
        assert_readme_holds(Section::Orms, "docs/runs/orm-sweep");
    }

    #[test]
    fn the_workload_findings_state_the_example_workloads_as_their_files_give_them() {
        assert_readme_holds(Section::Workloads, "docs/example-workloads");
    }
}
