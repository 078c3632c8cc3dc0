//! The commands over run directories already written: `report` (index.md and the HTML pages),
//! `compare` (two runs point by point) and `export` (a run's measures for other tools).
//! Each reads its flags and calls the report that does the work.

use anyhow::Result;

use crate::flags;
use crate::paths::Paths;
use crate::studies::sweep::report::compare::{self, CalibrationSource, Comparison};

impl flags::Report {
    /// `cargo xtask report`.
    pub fn run(self) -> Result<()> {
        super::index::write_index(&self.dirs, self.out)
    }
}

impl flags::Compare {
    /// `cargo xtask compare`: compares, writes compare.md, compare.json and compare.html, prints
    /// the table.
    pub fn run(self, paths: &Paths) -> Result<Comparison> {
        let source = match (self.calibration, self.no_calibration) {
            (Some(file), _) => CalibrationSource::File(file),
            (None, true) => CalibrationSource::Off,
            (None, false) => CalibrationSource::Newest(paths.reports()),
        };
        let out = self.out.unwrap_or_else(|| self.run_b.clone());
        let comparison = compare::write_comparison(
            &self.run_a,
            &self.run_b,
            self.threshold,
            &source,
            self.replicates.as_deref(),
            self.gate,
            Some(out.clone()),
        )?;
        let page = crate::html::compare_page::write(&comparison, &out)?;
        println!("page: {}", page.display());
        Ok(comparison)
    }
}

impl flags::Export {
    /// `cargo xtask export`: the run's measures on standard output.
    pub fn run(self) -> Result<()> {
        match self.format {
            flags::ExportFormat::Bmf => {
                println!(
                    "{}",
                    crate::studies::sweep::report::export::bmf_json(&self.run_dir)?
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use clap::Parser;

    use super::*;
    use crate::base::TargetKind;
    use crate::records::{RunRecord, csv};
    use crate::studies::sweep::report::compare::{Verdict, compare};
    use crate::studies::sweep::row::ProbeRow;

    /// `cargo xtask run column-sweep --target sqlite --profile <profile> --out <out>`, in-process,
    /// in a project root of its own; the run directory it made.
    fn real_sqlite_run(root: &Path, profile: &str, out: &Path) -> PathBuf {
        let run = flags::Run {
            profile: Some(profile.into()),
            out: Some(out.to_owned()),
            // One session: this test reads one repeat per point.
            sessions: Some(1),
            ..flags::Run::of("column-sweep", TargetKind::Sqlite)
        };
        let paths = crate::paths::Paths::new(root.to_owned());
        crate::pipeline::run(&run, &xshell::Shell::new().unwrap(), &paths).unwrap();
        let made: Vec<PathBuf> = std::fs::read_dir(out)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(made.len(), 1, "{made:?}");
        made[0].clone()
    }

    #[test]
    fn compare_reads_real_sqlite_runs_and_calls_a_real_run_made_100x_slower_slower() {
        let root = tempfile::tempdir().unwrap();
        let experiments = root.path().join("experiments");
        std::fs::create_dir(&experiments).unwrap();
        let mut file = std::fs::read_to_string(
            crate::paths::project_root().join("experiments/column-sweep.toml"),
        )
        .unwrap();
        // The smoke profile has one repeat per point; a verdict needs three.
        file.push_str(
            "\n[profile.three]\nrepeats = 3\nseed = 1\n[[profile.three.series]]\n\
             strategies = [\"bound\", \"literal\"]\ncolumns = [1, 8]\nrow-bytes = [1000]\nrows = 200\n",
        );
        std::fs::write(experiments.join("column-sweep.toml"), file).unwrap();
        let a = real_sqlite_run(root.path(), "smoke", &root.path().join("a"));
        let b = real_sqlite_run(root.path(), "smoke", &root.path().join("b"));
        let c = flags::Compare {
            gate: compare::Gate::Ratios,
            run_a: a.clone(),
            run_b: b.clone(),
            threshold: Some(5.0),
            calibration: None,
            no_calibration: false,
            replicates: None,
            out: None,
        }
        .run(&crate::paths::Paths::new(root.path().to_owned()))
        .unwrap();
        // Five strategies at 5 column counts, per-row at 8: all in both, one repeat each.
        assert_eq!(
            (c.points.len(), c.only_in_a.len(), c.only_in_b.len()),
            (26, 0, 0)
        );
        // Nothing differs between the runs; only this machine's load and speed, which are not
        // the test's, may be noted (the host's speed is always stated, measured).
        let other: Vec<&String> = c
            .notes
            .iter()
            .filter(|n| !n.contains("shared its machine") && !n.starts_with("the hosts' speed"))
            .collect();
        assert!(other.is_empty(), "{other:?}");
        assert!(c.host.is_some(), "both runs read the host's speed");
        let (rows_a, rows_b): (Vec<ProbeRow>, Vec<ProbeRow>) = (
            csv::read(&a.join("results.csv")).unwrap(),
            csv::read(&b.join("results.csv")).unwrap(),
        );
        for p in &c.points {
            let time = |rows: &[ProbeRow]| -> f64 {
                let at: Vec<&ProbeRow> = rows
                    .iter()
                    .filter(|r| {
                        r.counts() && r.strategy == p.key.strategy && r.columns == p.key.columns
                    })
                    .collect();
                assert_eq!(at.len(), 1, "{:?}", p.key);
                (at[0].outside_ms - at[0].prepare_ms.unwrap()) * 1000.0 / at[0].rows as f64
            };
            // b's times are put on a's host where the hosts' readings differ (this machine's
            // load moves them), and taken as they are otherwise.
            let host = c
                .host
                .filter(|h| h.verdict != crate::reports::host_speed::HostVerdict::Same)
                .map_or(1.0, |h| h.ratio);
            let ratio = time(&rows_b) / host / time(&rows_a);
            let got = p.ratio.unwrap();
            assert!(
                (got - ratio).abs() < 1e-9 * ratio,
                "{:?}: {got} {ratio}",
                p.key
            );
            // One repeat: no interval, and no verdict.
            assert_eq!((p.ci_low, p.ci_high), (None, None));
            assert_eq!(p.verdict, Verdict::TooFewRepeats);
        }
        assert_eq!(c.regressions(), 0);
        let md = std::fs::read_to_string(b.join("compare.md")).unwrap();
        assert!(
            md.contains("\n26 points compared: 26 too few repeats (3 needed).\n"),
            "{md}"
        );
        // The table shows such a ratio without its zero-width interval.
        for p in &c.points {
            let row = format!(
                "| {:.2} | 1.05 | – | too few repeats (3 needed) |\n",
                p.ratio.unwrap()
            );
            assert!(md.contains(&row), "{row} not in\n{md}");
        }
        // compare.html beside it: every point undecided at a glance, one row and strip each.
        let html = std::fs::read_to_string(b.join("compare.html")).unwrap();
        assert_eq!(
            html.matches("<tr class=\"undecided\">").count(),
            26,
            "{html}"
        );
        assert!(html.contains("of 26 points"), "{html}");
        assert_eq!(html.matches("<svg").count(), 26, "{html}");
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(b.join("compare.json")).unwrap()).unwrap();
        assert_eq!(json["points"].as_array().unwrap().len(), 26);
        assert_eq!(json["points"][0]["verdict"], "too-few-repeats");

        // Three repeats, against themselves and against the same rows 100 times slower (written
        // through the records API): never a verdict against itself, always slower at 100×.
        let three = real_sqlite_run(root.path(), "three", &root.path().join("three"));
        let record = RunRecord::read(&three.join("run.toml")).unwrap();
        let mut rows: Vec<ProbeRow> = csv::read(&three.join("results.csv")).unwrap();
        let itself = compare(&three, &three, Some(5.0), &CalibrationSource::Off).unwrap();
        assert_eq!(itself.points.len(), 4);
        for p in &itself.points {
            assert_eq!((p.a.n, p.b.n), (3, 3));
            assert!(
                !matches!(p.verdict, Verdict::Slower | Verdict::Faster),
                "{p:?}"
            );
        }
        rows.iter_mut().for_each(|r| r.outside_ms *= 100.0);
        let slow = root.path().join("slow");
        std::fs::create_dir_all(&slow).unwrap();
        record.write(&slow.join("run.toml")).unwrap();
        csv::write(&slow.join("results.csv"), &rows).unwrap();
        let slower = compare(&three, &slow, Some(5.0), &CalibrationSource::Off).unwrap();
        assert_eq!(slower.regressions(), 4);
        assert!(slower.points.iter().all(|p| p.verdict == Verdict::Slower));
    }

    #[test]
    fn compare_parses_its_flags() {
        let parse = |args: &[&str]| match flags::Xtask::try_parse_from(args).unwrap().task {
            flags::Task::Compare(c) => c,
            other => panic!("not a compare: {other:?}"),
        };
        let c = parse(&["xtask", "compare", "runs/a", "runs/b"]);
        assert_eq!(
            (c.run_a, c.run_b),
            (PathBuf::from("runs/a"), PathBuf::from("runs/b"))
        );
        assert_eq!((c.threshold, c.out), (None, None));
        assert!(!c.no_calibration && c.calibration.is_none());
        let c = parse(&[
            "xtask",
            "compare",
            "a",
            "b",
            "--threshold",
            "2.5",
            "--out",
            "d",
        ]);
        assert_eq!((c.threshold, c.out), (Some(2.5), Some(PathBuf::from("d"))));
        let c = parse(&["xtask", "compare", "a", "b", "--calibration", "c.csv"]);
        assert_eq!(c.calibration, Some(PathBuf::from("c.csv")));
        assert!(parse(&["xtask", "compare", "a", "b", "--no-calibration"]).no_calibration);
        for clash in [
            &["--threshold", "3", "--calibration", "c.csv"][..],
            &["--threshold", "3", "--no-calibration"],
            &["--calibration", "c.csv", "--no-calibration"],
        ] {
            let args = ["xtask", "compare", "a", "b"].iter().chain(clash).copied();
            assert!(flags::Xtask::try_parse_from(args).is_err(), "{clash:?}");
        }
        assert!(flags::Xtask::try_parse_from(["xtask", "compare", "a"]).is_err());
    }
}
