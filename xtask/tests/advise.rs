//! `cargo xtask advise`: every bad input in `tests/bad-advice/` (its flags in `<case>.args`)
//! exits 2 with exactly the text of `<case>.err`; the answer for a shape names a strategy, its
//! margin with its interval, and each strategy's rows per statement with the limit that binds
//! it; a CREATE TABLE gives the columns; with `--orm`, every case in `tests/orm-advice/` exits 0
//! with exactly the text of `<case>.out`, its code block exactly the library's `json-each`
//! sample. `--measure` is in the e2e tests (it runs a target).

mod support;

use std::path::PathBuf;

use support::{project_root, xtask};

fn golden_dir() -> PathBuf {
    project_root().join("xtask/tests/bad-advice")
}

fn orm_golden_dir() -> PathBuf {
    project_root().join("xtask/tests/orm-advice")
}

#[test]
fn bad_input_exits_2_with_its_golden_error() {
    let mut checked = 0;
    let mut entries: Vec<PathBuf> = std::fs::read_dir(golden_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "args"))
        .collect();
    entries.sort();
    let bless = std::env::var_os("BLESS").is_some();
    for args_file in entries {
        let args = std::fs::read_to_string(&args_file).unwrap();
        let mut argv = vec!["advise"];
        argv.extend(args.split_whitespace());
        let output = xtask(&argv).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert_eq!(output.status.code(), Some(2), "{args_file:?}: {stderr}");
        let err_file = args_file.with_extension("err");
        if bless {
            std::fs::write(&err_file, &stderr).unwrap();
        }
        let expected = std::fs::read_to_string(&err_file)
            .unwrap_or_else(|e| panic!("{}: {e} (BLESS=1 writes it)", err_file.display()));
        assert_eq!(stderr, expected, "{}", args_file.display());
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} golden files");
}

#[test]
fn the_answer_names_a_strategy_its_margin_and_every_limit() {
    let output = xtask(&["advise", "--columns", "24", "--row-bytes", "2000"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", support::text(&output));
    assert!(text.contains("\nuse: "), "{text}");
    // The margin with its interval, whatever the committed map's figures are.
    let runner_up = text
        .lines()
        .find(|l| l.starts_with("runner-up: "))
        .unwrap_or_else(|| panic!("no runner-up in {text}"));
    assert!(
        runner_up.contains(" ×") && runner_up.contains("–") && runner_up.contains("% interval"),
        "{text}"
    );
    for line in [
        "  bound              4  bound parameters (100 per statement)",
        "  batched-rows       1  one row per statement by design",
    ] {
        assert!(text.contains(line), "no `{line}` in {text}");
    }
    assert!(text.contains("statement length"), "{text}");
    assert!(text.contains("string size"), "{text}");
}

#[test]
fn a_create_table_gives_the_columns() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("schema.sql");
    let columns: Vec<String> = (0..24).map(|i| format!("c{i} TEXT")).collect();
    std::fs::write(&file, format!("CREATE TABLE t ({});", columns.join(", "))).unwrap();
    let output = xtask(&[
        "advise",
        "--schema",
        file.to_str().unwrap(),
        "--row-bytes",
        "2000",
    ])
    .output()
    .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", support::text(&output));
    assert!(
        text.starts_with("24 columns × 2000 bytes per row (columns from table `t` of "),
        "{text}"
    );
}

#[test]
fn orm_advice_prints_its_golden_answer() {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(orm_golden_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "args"))
        .collect();
    entries.sort();
    let bless = std::env::var_os("BLESS").is_some();
    for args_file in &entries {
        let args = std::fs::read_to_string(args_file).unwrap();
        let mut argv = vec!["advise"];
        argv.extend(args.split_whitespace());
        let output = xtask(&argv).output().unwrap();
        assert!(
            output.status.success(),
            "{args_file:?}: {}",
            support::text(&output)
        );
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let out_file = args_file.with_extension("out");
        if bless {
            std::fs::write(&out_file, &stdout).unwrap();
        }
        let expected = std::fs::read_to_string(&out_file)
            .unwrap_or_else(|e| panic!("{}: {e} (BLESS=1 writes it)", out_file.display()));
        assert_eq!(stdout, expected, "{}", args_file.display());
    }
    assert!(entries.len() >= 4, "only {} golden files", entries.len());
}

/// The code advise prints is the sample the ORM Worker runs (`base::orm::json_each_sample`,
/// each line of it in `worker-orm/src/orms.js`, run by the e2e ORM test), not a copy of it.
#[test]
fn the_printed_code_is_exactly_the_librarys_json_each_sample() {
    use xtask::base::orm::{Orm, json_each_sample};
    for orm in Orm::ALL {
        let output = xtask(&[
            "advise",
            "--columns",
            "24",
            "--row-bytes",
            "2000",
            "--orm",
            orm.name(),
        ])
        .output()
        .unwrap();
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{}", support::text(&output));
        let (_, after) = text
            .split_once("```js\n")
            .unwrap_or_else(|| panic!("{text}"));
        let (code, _) = after.split_once("```").unwrap();
        assert_eq!(code, json_each_sample(orm), "{orm}");
    }
}
