//! End to end, for real: the ORM Worker (`--worker js`, which runs as `js-orm` for a study with
//! libraries) runs the ORM sweep's smoke profile on
//! wrangler dev with a real local D1, each library's bulk insert beside the strategies in the
//! same rounds, and every probe, the libraries' included, is reconciled by count and content
//! checksum; what each library sent is in results.csv and summary.md.

use std::process::Command;

use crate::harness::Trial;
use crate::support::{XTASK, num, project_root, read_csv, run_dir, run_toml};

pub fn tests() -> Vec<Trial> {
    tests!(orms: orm_sweep_smoke_reconciles_every_library_probe)
}

/// The smoke run of `orm-sweep`: every probe reconciled, each library at each point with what
/// it sent as modelled, Prisma stopped by its own limit at 100 columns, and the section of
/// summary.md; the command (`--worker js`) runs it in the ORM Worker and says so, and the
/// Workers without libraries refuse the file.
pub fn orm_sweep_smoke_reconciles_every_library_probe() {
    let out = tempfile::tempdir().unwrap();
    let output = Command::new(XTASK)
        .args(["run", "orm-sweep", "--profile", "smoke", "--worker", "js"])
        .arg("--out")
        .arg(out.path())
        .current_dir(project_root())
        .stdout(std::process::Stdio::inherit())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the ORM smoke run failed: {}\n{stderr}",
        output.status
    );
    assert!(
        stderr.contains("`--worker js` runs as `--worker js-orm`"),
        "{stderr}"
    );
    let dir = run_dir(out.path());
    let rows = read_csv(&dir.join("results.csv"));
    assert!(
        rows.iter().all(|r| r["target"] == "local"),
        "no baseline: bare SQLite runs no library"
    );
    for row in &rows {
        assert_eq!(row["worker"], "js-orm", "{row:?}");
        assert_eq!(row["reconciled"], "true", "{row:?}");
        assert_eq!(row["checksum_equal"], "true", "{row:?}");
    }
    for library in ["drizzle", "prisma", "kysely"] {
        for columns in ["8", "64", "100"] {
            let at: Vec<_> = rows
                .iter()
                .filter(|r| r["orm"] == library && r["columns"] == columns)
                .filter(|r| r["idiom"] == "documented")
                .collect();
            // One warm-up round and one measured round in each of the two sessions.
            assert_eq!(at.len(), 4, "{library} at {columns} columns: {at:?}");
            for row in at {
                assert_eq!(row["strategy"], "batched-rows", "{row:?}");
                if library == "prisma" && columns == "100" {
                    assert_eq!(row["outcome"], "error", "{row:?}");
                    assert!(
                        row["error"].contains("query parameter limit"),
                        "Prisma refuses a row past its adapter's 98 values: {row:?}"
                    );
                    assert_eq!(num(row, "rows_present"), 0, "{row:?}");
                    continue;
                }
                assert_eq!(row["outcome"], "ok", "{row:?}");
                assert_eq!(num(row, "rows_present"), num(row, "rows"), "{row:?}");
                assert_eq!(row["unlike_model"], "", "sent as modelled: {row:?}");
            }
            // The json-each sample: the json strategy's one statement of 100 rows, one value
            // bound, at every width, Prisma's 100 columns included.
            let samples: Vec<_> = rows
                .iter()
                .filter(|r| r["orm"] == library && r["columns"] == columns)
                .filter(|r| r["idiom"] == "json-each")
                .collect();
            assert_eq!(
                samples.len(),
                4,
                "{library} json-each at {columns}: {samples:?}"
            );
            for row in samples {
                assert_eq!(row["outcome"], "ok", "{row:?}");
                assert_eq!(row["unlike_model"], "", "sent as modelled: {row:?}");
                assert_eq!(
                    (&row["statements_sent"][..], &row["bound_per_statement"][..]),
                    ("1", "1"),
                    "{row:?}"
                );
            }
        }
    }
    let documented = |library: &str, columns: &str| {
        rows.iter()
            .find(|r| r["orm"] == library && r["columns"] == columns && r["idiom"] == "documented")
            .unwrap()
    };
    let drizzle_8 = documented("drizzle", "8");
    // 100 rows in chunks of floor(100 / 8) = 12, in one batch.
    assert_eq!(
        (
            &drizzle_8["statements_sent"][..],
            &drizzle_8["rows_per_statement"][..],
            &drizzle_8["bound_per_statement"][..],
            &drizzle_8["d1_call_kinds"][..]
        ),
        ("9", "12", "96", "batch 1")
    );
    let kysely_64 = documented("kysely", "64");
    assert_eq!(kysely_64["d1_call_kinds"], "all 100", "{kysely_64:?}");
    let strategies = rows.iter().filter(|r| r["orm"].is_empty()).count();
    assert_eq!(
        strategies,
        5 * 3 * 4,
        "the five strategies at 3 points, 4 rounds"
    );

    let record = run_toml(&dir);
    assert_eq!(record["run"]["status"].as_str(), Some("complete"));
    assert_eq!(record["run"]["worker"].as_str(), Some("js-orm"));
    assert!(
        record["versions"]["worker"]
            .as_str()
            .is_some_and(|v| v.starts_with("d1bench-worker-orm ")),
        "{:?}",
        record["versions"]
    );
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("## Libraries beside the strategies"),
        "{summary}"
    );
    for line in [
        "| 8 | drizzle |",
        "| 64 | kysely |",
        "| 100 | prisma | error",
        "| 100 | prisma json-each |",
    ] {
        assert!(summary.contains(line), "{line} in {summary}");
    }

    for worker in ["js-minimal", "rust"] {
        let output = Command::new(XTASK)
            .args(["run", "orm-sweep", "--worker", worker, "--dry-run"])
            .current_dir(project_root())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success() && stderr.contains("which only the ORM Worker runs"),
            "--worker {worker}: {stderr}"
        );
    }
}
