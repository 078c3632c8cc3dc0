//! End to end, for real: the column sweep's smoke profile with the Worker writing through its
//! SQLite-backed Durable Object, alternating with the local D1 (`--baseline do`): every probe on
//! both reconciled by count and checksum, local ÷ do per point in summary.csv, the exec script
//! refused by the object's SQL length limit as it answers it; and what the `do` and `remote-do`
//! targets refuse.

use std::process::Command;

use crate::harness::Trial;
use crate::support::{XTASK, num, project_root, read_csv, run_dir, run_toml};

pub fn tests() -> Vec<Trial> {
    tests!(durable:
        d1_beside_a_durable_object_reconciles_and_divides,
        the_do_target_refuses_what_it_cannot_run,
    )
}

pub fn d1_beside_a_durable_object_reconciles_and_divides() {
    let out = tempfile::tempdir().unwrap();
    let status = Command::new(XTASK)
        .args([
            "run",
            "column-sweep",
            "--profile",
            "smoke",
            "--baseline",
            "do",
            "--out",
        ])
        .arg(out.path())
        .current_dir(project_root())
        .status()
        .unwrap();
    assert!(
        status.success(),
        "the D1-beside-DO smoke run failed: {status}"
    );
    let dir = run_dir(out.path());
    let rows = read_csv(&dir.join("results.csv"));
    let (d1, durable): (Vec<_>, Vec<_>) = rows.iter().partition(|r| r["target"] == "local");
    assert!(
        durable.iter().all(|r| r["target"] == "do"),
        "only local and do"
    );
    assert_eq!(d1.len(), durable.len(), "the baseline runs the same probes");
    for row in &rows {
        assert_eq!(row["reconciled"], "true", "{row:?}");
        assert_eq!(row["target_failed"], "false", "{row:?}");
    }
    for row in &durable {
        match (row["strategy"].as_str(), row["outcome"].as_str()) {
            // One sql.exec of the whole script is one SQL text, held to the 100 KB limit.
            ("exec", outcome) => {
                assert_eq!(outcome, "refused", "{row:?}");
                assert_eq!(row["refusal"], "statement-too-long", "{row:?}");
                assert_eq!(num(row, "rows_present"), 0, "{row:?}");
            }
            // Each statement its own call on the storage, as each is its own D1 call.
            ("per-row", "ok") => {
                assert_eq!(num(row, "d1_calls"), num(row, "statements"), "{row:?}")
            }
            (_, "ok") => assert_eq!(num(row, "d1_calls"), 1, "{row:?}"),
            (strategy, outcome) => panic!("{strategy} on do: {outcome}: {row:?}"),
        }
        assert!(
            row["d1_ms"].is_empty(),
            "the object has no D1 clock: {row:?}"
        );
    }
    let summary = read_csv(&dir.join("summary.csv"));
    let ratios: Vec<_> = summary
        .iter()
        .filter(|r| r["measure"] == "ratio_to_do" && r["target"] == "local")
        .collect();
    assert!(
        ratios.iter().any(|r| r["strategy"] == "bound"),
        "summary.csv has local ÷ do per point"
    );
    assert!(!summary.iter().any(|r| r["measure"] == "ratio_to_sqlite"));
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("## `local` ÷ the Durable Object"), "{md}");
    let record = run_toml(&dir);
    assert_eq!(record["run"]["baseline"].as_str(), Some("do"));
    assert!(
        md.contains("--baseline do"),
        "the summary's command reproduces the baseline"
    );
}

pub fn the_do_target_refuses_what_it_cannot_run() {
    for (args, says) in [
        (
            &["read-path", "--target", "do"][..],
            "workloads run on D1 and bare SQLite only",
        ),
        (
            &["column-sweep", "--target", "sqlite", "--baseline", "do"][..],
            "does not go with --target sqlite",
        ),
        (
            &["column-sweep", "--baseline", "do", "--worker", "js"][..],
            "do not go with --baseline do",
        ),
        (
            &["query-budget", "--baseline", "do"][..],
            "climb them on a Durable Object with `--target do`",
        ),
        // On Cloudflare the Durable Object is `remote-do`, beside D1 there only.
        (
            &["read-path", "--target", "remote-do"][..],
            "workloads run on D1 and bare SQLite only",
        ),
        (
            &["column-sweep", "--target", "remote", "--baseline", "do"][..],
            "`remote-do` (beside `--target remote`)",
        ),
        (
            &["column-sweep", "--baseline", "remote-do"][..],
            "--baseline remote-do does not go with --target local",
        ),
        (
            &["column-sweep", "--target", "remote-do", "--worker", "js"][..],
            "--worker js runs on the local target only",
        ),
    ] {
        let output = Command::new(XTASK)
            .arg("run")
            .args(args)
            .arg("--dry-run")
            .current_dir(project_root())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success() && stderr.contains(says),
            "{args:?}: {stderr}"
        );
    }
}
