//! `cargo xtask advise --measure`: one shape measured there and then, answered from that run.

use std::process::{Command, Stdio};
use std::time::Instant;

use crate::harness::Trial;
use crate::support::{XTASK, project_root};

pub fn tests() -> Vec<Trial> {
    tests!(advise: advise_measures_one_shape_on_sqlite_and_answers_from_it)
}

/// `cargo xtask advise --measure --target sqlite` measures the one shape over sessions through
/// the sweep pipeline and answers from that run. How long it took is printed, not asserted: a
/// speed is a figure to report, and a test run beside other work takes longer without anything
/// being wrong.
pub fn advise_measures_one_shape_on_sqlite_and_answers_from_it() {
    let started = Instant::now();
    let output = Command::new(XTASK)
        .args([
            "advise",
            "--columns",
            "24",
            "--row-bytes",
            "2000",
            "--measure",
            "--target",
            "sqlite",
        ])
        .current_dir(project_root())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let advice = text
        .split_once("\n24 columns × 2000 bytes per row")
        .map(|(_, advice)| advice)
        .unwrap_or_else(|| panic!("no advice after the run: {text}"));
    assert!(
        advice.contains("on bare SQLite, from the run just measured"),
        "{advice}"
    );
    assert!(advice.contains("a measured cell of the map"), "{advice}");
    assert!(advice.contains("\nuse: "), "{advice}");
    assert!(advice.contains("interval over sessions"), "{advice}");
    assert!(
        advice.contains("  bound              4  bound parameters"),
        "{advice}"
    );
    eprintln!("advise --measure --target sqlite answered in {elapsed:.1?}");
}
