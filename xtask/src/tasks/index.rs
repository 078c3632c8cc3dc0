//! `cargo xtask report <dirs...>`: one `index.md` over many run directories (the experiments
//! workflow's artifacts, or `reports/`): each run's provenance, summary table and charts, the
//! charts redrawn from its results.csv as `cargo xtask plot` does; and the same in HTML: each
//! run's `index.html` in its directory, whatever its kind, and one page over every run beside
//! index.md, newest first (`crate::html`).

use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::html::runs_page::{self, Entry};
use crate::html::{run_page, run_pages};
use crate::paths::relative;
use crate::records::RunDir;
use crate::records::RunRecord;

/// Every directory under `roots` (or a root itself) holding a run.toml, sorted.
pub fn find_runs(roots: &[PathBuf]) -> Result<Vec<PathBuf>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
        if dir.join("run.toml").is_file() {
            out.push(dir.to_owned());
            return Ok(());
        }
        for entry in
            std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?
        {
            let path = entry?.path();
            if path.is_dir() {
                walk(&path, out)?;
            }
        }
        Ok(())
    }
    let mut runs = Vec::new();
    for root in roots {
        if !root.is_dir() {
            bail!("{} is not a directory", root.display());
        }
        walk(root, &mut runs)?;
    }
    runs.sort();
    runs.dedup();
    Ok(runs)
}

/// The index.md section of one run; draws its charts on the way, then writes a sweep's HTML page
/// from them. The run as the page over runs lists it.
fn section(run: &Path, out_dir: &Path) -> Result<(String, Entry)> {
    let run_dir = RunDir::new(run.to_owned());
    let record = RunRecord::read(&run_dir.run_toml())?;
    let mut entry = Entry {
        dir: run.to_owned(),
        record: record.clone(),
        page: None,
        headline: None,
    };
    let r = &record.run;
    let mut text = String::new();
    let place = match &record.remote {
        Some(remote) => format!(
            "remote, {}",
            remote
                .location_hint
                .as_deref()
                .unwrap_or("no location hint")
        ),
        None => r.target.to_string(),
    };
    writeln!(text, "## {} ({place}, {})\n", r.experiment, r.profile).unwrap();
    writeln!(
        text,
        "- run: [`{}`]({}), status **{}**, {} to {}",
        r.id,
        relative(out_dir, run).display(),
        r.status,
        r.started,
        r.ended.as_deref().unwrap_or("(not ended)")
    )
    .unwrap();
    if let Some(error) = &r.error {
        writeln!(text, "- error: {}", error.replace('\n', " ")).unwrap();
    }
    if let Some(totals) = &record.reconciliation {
        let unit = crate::studies::kind_of(r.kind).unit();
        writeln!(text, "- {}", totals.line(unit)).unwrap();
    }
    if let Some(remote) = &record.remote {
        let list = |v: &[String]| {
            if v.is_empty() {
                "not reported".to_owned()
            } else {
                v.join(", ")
            }
        };
        writeln!(
            text,
            "- D1 served by region {} (colo {}); {} plan, {} queries per invocation; read \
             replication {}",
            list(&remote.served_by_region),
            list(&remote.served_by_colo),
            remote.plan,
            remote.queries_per_invocation,
            match &remote.read_replication {
                Some(mode) => format!("`{mode}` (turned on by the run: it reads in D1 sessions)"),
                None => "left off (no reads in D1 sessions)".to_owned(),
            }
        )
        .unwrap();
    }
    if let Some(baseline) = &record.baseline_remote {
        writeln!(
            text,
            "- the baseline on Cloudflare: Worker `{}`, teardown {}",
            baseline.name, baseline.teardown
        )
        .unwrap();
    }
    writeln!(
        text,
        "- commit `{}`{}, wrangler {}, worker {}",
        record.git.commit,
        if record.git.dirty { " (dirty)" } else { "" },
        record.versions.wrangler,
        record.versions.worker
    )
    .unwrap();
    // A large committed run keeps its records gzipped (results.csv.gz): they count too.
    if !run_pages::measured(&run_dir) {
        let written = run_pages::write(&run_dir, &record, &[], false)?;
        entry.page = Some(written.path);
        writeln!(text, "\nNo results.csv: the run ended before measuring.\n").unwrap();
        return Ok((text, entry));
    }
    // The same rendering as `cargo xtask plot`: tables and charts from the run's own files.
    let rendered = crate::studies::render(&run_dir, false, false)?;
    let written = run_pages::write(&run_dir, &record, &rendered.charts, false)?;
    text.push_str(&format!(
        "- page: [`{}`]({})\n",
        run_page::PAGE,
        relative(out_dir, &written.path).display()
    ));
    (entry.page, entry.headline) = (Some(written.path), written.headline);
    writeln!(text, "\n{}", rendered.tables).unwrap();
    for chart in rendered
        .charts
        .iter()
        .filter(|c| c.path.extension().is_some_and(|e| e == "png"))
    {
        let name = chart
            .path
            .file_stem()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        writeln!(
            text,
            "![{name}]({})\n\n*{}*\n",
            relative(out_dir, &chart.path).display(),
            chart.caption
        )
        .unwrap();
    }
    Ok((text, entry))
}

/// `cargo xtask report`: index.md over every run directory under `dirs`, written in `out`
/// (default: the first of `dirs`).
pub fn write_index(dirs: &[PathBuf], out: Option<PathBuf>) -> Result<()> {
    let runs = find_runs(dirs)?;
    if runs.is_empty() {
        bail!(
            "no run directory (one holding run.toml) under {}",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let out_dir = out.unwrap_or_else(|| dirs[0].clone());
    std::fs::create_dir_all(&out_dir)
        .with_context(|| format!("cannot create {}", out_dir.display()))?;
    let (index, entries) = index(&runs, &out_dir)?;
    let path = out_dir.join("index.md");
    std::fs::write(&path, index).with_context(|| format!("cannot write {}", path.display()))?;
    println!("index: {} ({} runs)", path.display(), runs.len());
    for page in entries.iter().filter_map(|e| e.page.as_ref()) {
        println!("page: {}", page.display());
    }
    let html = out_dir.join(runs_page::file_name(&out_dir));
    let mut entries = entries;
    runs_page::newest_first(&mut entries);
    crate::html::write(&html, &runs_page::page(&entries, &out_dir))?;
    println!("runs page: {}", html.display());
    Ok(())
}

/// The whole index.md, and each run as the page over runs lists it.
fn index(runs: &[PathBuf], out_dir: &Path) -> Result<(String, Vec<Entry>)> {
    let mut text = format!(
        "# d1bench runs\n\n{} run(s). Compare ratios between strategies, not milliseconds between targets.\n\n",
        runs.len()
    );
    let mut entries = Vec::new();
    for run in runs {
        let (section, entry) = section(run, out_dir)?;
        text.push_str(&section);
        text.push('\n');
        entries.push(entry);
    }
    Ok((text, entries))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::TargetKind;
    use crate::records::RunStatus;
    use crate::records::csv::Appender;
    use crate::records::run_record::RunInfo;
    use crate::studies::sweep::row::ProbeRow;
    use crate::targets::remote::RemoteRecord;

    fn record(id: &str, target: TargetKind, remote: Option<RemoteRecord>) -> RunRecord {
        let base = crate::records::run_record::tests_support::record();
        RunRecord {
            run: RunInfo {
                id: id.into(),
                target,
                ..base.run
            },
            machine: crate::records::run_record::machine(),
            remote,
            ..base
        }
    }

    #[test]
    fn every_run_under_the_roots_gets_a_section_with_relative_links() {
        let root = tempfile::tempdir().unwrap();
        let local = root
            .path()
            .join("run-column-sweep-local/column-sweep/20261129T235502Z-local");
        let remote = root
            .path()
            .join("run-column-sweep-remote-weur/column-sweep/20261129T235502Z-remote");
        let failed = root
            .path()
            .join("run-x/column-sweep/20261129T235502Z-remote");
        for dir in [&local, &remote, &failed] {
            std::fs::create_dir_all(dir).unwrap();
        }
        record("20261129T235502Z-local", TargetKind::Local, None)
            .write(&local.join("run.toml"))
            .unwrap();
        let mut writer = Appender::<ProbeRow>::open(&local.join("results.csv")).unwrap();
        writer
            .append(&crate::studies::sweep::row::tests_support::row())
            .unwrap();
        let mut remote_record = record(
            "20261129T235502Z-remote",
            TargetKind::Remote,
            Some(RemoteRecord {
                name: "d1bench-run-x".into(),
                location_hint: Some("weur".into()),
                created_in_region: Some("WEUR".into()),
                plan: "free".into(),
                queries_per_invocation: 50,
                served_by_region: vec!["WEUR".into()],
                served_by_colo: vec!["AMS".into()],
                read_replication: Some("auto".into()),
                subrequests: None,
                hyperdrive: None,
                teardown: "deleted".into(),
            }),
        );
        remote_record.write(&remote.join("run.toml")).unwrap();
        remote_record.run.status = RunStatus::Failed;
        remote_record.run.error = Some("setup failed:\nno subdomain".into());
        remote_record.write(&failed.join("run.toml")).unwrap();

        let runs = find_runs(&[root.path().to_owned()]).unwrap();
        assert_eq!(runs.len(), 3);
        let (text, entries) = index(&runs, root.path()).unwrap();
        // Every run has a page; the two that measured nothing say so on theirs.
        let pages: Vec<_> = entries.iter().filter_map(|e| e.page.clone()).collect();
        assert_eq!(pages.len(), 3);
        assert!(pages.contains(&local.join("index.html")), "{pages:?}");
        let failed_page = std::fs::read_to_string(failed.join("index.html")).unwrap();
        assert!(failed_page.contains("Status: failed."), "{failed_page}");
        assert!(failed_page.contains("Nothing measured"), "{failed_page}");
        assert!(
            text.contains("- page: [`index.html`](run-column-sweep-local/"),
            "{text}"
        );
        assert!(text.starts_with("# d1bench runs\n\n3 run(s)."), "{text}");
        assert!(
            text.contains("## column-sweep (local, smoke)")
                && text.contains("## column-sweep (remote, weur, smoke)"),
            "{text}"
        );
        assert!(
            text.contains("(run-column-sweep-local/column-sweep/20261129T235502Z-local)"),
            "{text}"
        );
        assert!(
            text.contains(
                "D1 served by region WEUR (colo AMS); free plan, 50 queries per invocation; \
                 read replication `auto` (turned on by the run"
            ),
            "{text}"
        );
        assert!(
            text.contains("- error: setup failed: no subdomain"),
            "{text}"
        );
        assert!(
            text.contains("No results.csv: the run ended before measuring."),
            "{text}"
        );
        // The local run's answer first, and its charts, captioned.
        assert!(
            text.contains(
                "the answer on the local D1 (fastest; runner-up ÷ fastest), 1 of 1 decided:\n  \
                 8 columns: bound\n"
            ),
            "{text}"
        );
        assert!(text.contains("![time-per-1000-rows-vs-columns]("), "{text}");
        assert!(
            text.contains(
                "*Time per 1,000 rows written, local D1 (wrangler dev). Median time per 1,000 \
                 rows written"
            ),
            "{text}"
        );
        // The local run's page: its findings, its charts inline, a link to each of its files
        // but the page itself; the page over runs links it and each run's files.
        let page = std::fs::read_to_string(local.join("index.html")).unwrap();
        assert!(page.contains("<section id=\"findings\">"), "{page}");
        assert!(
            page.contains("id=\"chart-time-per-1000-rows-vs-columns\"><svg"),
            "{page}"
        );
        for file in ["results.csv", "run.toml", "summary.md", "summary.csv"] {
            assert!(
                page.contains(&format!("<a href=\"{file}\">{file}</a>")),
                "{file}"
            );
        }
        assert!(!page.contains("href=\"index.html\""), "{page}");
        write_index(&[root.path().to_owned()], None).unwrap();
        let over = std::fs::read_to_string(root.path().join("index.html")).unwrap();
        assert!(
            over.contains(
                "href=\"run-column-sweep-local/column-sweep/20261129T235502Z-local/index.html\""
            ),
            "{over}"
        );
        assert!(over.contains("3 run(s), newest first."), "{over}");
        assert!(over.contains("setup failed:\nno subdomain"), "{over}");
    }

    #[test]
    fn no_runs_is_an_error_naming_where_it_looked() {
        let root = tempfile::tempdir().unwrap();
        let err = write_index(&[root.path().to_owned()], None)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("no run directory (one holding run.toml) under "),
            "{err}"
        );
        assert_eq!(
            relative(Path::new("/a/b"), Path::new("/a/c/d.png")),
            PathBuf::from("../c/d.png")
        );
    }
}
