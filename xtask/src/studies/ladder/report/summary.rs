//! `summary.md` of a ladder run: how it ran, the parity table, every climb's finding, and the
//! charts drawn (the run's page shows them too; the terminal no longer lists them).

use std::fmt::Write as _;

use d1bench_core::ladder::LadderKind;

use super::parity::{self, ParityRow};
use crate::base::numbers::thousands;
use crate::records::RunRecord;
use crate::reports::charts::Drawn;
use crate::reports::memory::{self, HeapPoint};
use crate::reports::provenance;
use crate::studies::ladder::Role;
use crate::studies::ladder::row::{ClimbFinding, RungRow};

/// `summary.md`: the parity table, then every climb's finding, then the charts drawn.
pub fn markdown(
    title: &str,
    record: &RunRecord,
    findings: &[ClimbFinding],
    rungs: &[RungRow],
    parity_rows: &[ParityRow],
    charts: &[Drawn],
) -> String {
    let mut out = format!("# {title}\n\n");
    writeln!(
        out,
        "Run `{}` on `{}`, status **{}**; reproduce with `{}`.\n",
        record.run.id,
        record.run.target,
        record.run.status,
        provenance::command(record),
    )
    .unwrap();
    out.push_str(&provenance::resumptions(record));
    if let Some(totals) = &record.reconciliation {
        writeln!(out, "Reconciliation: {}.\n", totals.line("rungs")).unwrap();
    }
    out.push_str(&provenance::time_section(record));
    out.push_str("## Limits: documented and found\n\n");
    out.push_str(&parity::markdown(parity_rows));
    let mut kinds: Vec<LadderKind> = findings.iter().map(|f| f.ladder).collect();
    kinds.dedup();
    for kind in kinds {
        let mine: Vec<&ClimbFinding> = findings.iter().filter(|f| f.ladder == kind).collect();
        let study = record.studies.iter().find(|s| s.name == kind.name());
        writeln!(
            out,
            "\n## {} ({})\n\n{}\n",
            kind.name(),
            kind.unit(),
            study.map_or("", |s| s.description.as_str())
        )
        .unwrap();
        let ceiling = kind == LadderKind::ParamCeiling;
        // The target's own floor(P / C): a run's climbs are all on one target.
        let rows_allowed = mine.first().map_or(super::parity::Ceiling::D1, |f| {
            super::parity::Ceiling::of(f)
        });
        out.push_str("| held | last ok | first failed | refusal | completed before it | confirmed | stopped | last ok took (outside / inside / D1 ms) |");
        if ceiling {
            writeln!(out, " {} | matches |", rows_allowed.formula()).unwrap();
        } else {
            out.push('\n');
        }
        out.push_str("| --- | --- | --- | --- | --- | --- | --- | --- |");
        out.push_str(if ceiling { " --- | --- |\n" } else { "\n" });
        for f in &mine {
            let num = |v: Option<usize>| v.map_or("-".to_owned(), thousands);
            let ms = |v: Option<f64>| v.map_or("-".to_owned(), |v| format!("{v:.1}"));
            write!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} / {} / {} |",
                if f.held.is_empty() { "-" } else { &f.held },
                num(f.last_ok),
                num(f.first_failed),
                f.refusal.map_or("-".to_owned(), |r| r.to_string()),
                f.statements_completed
                    .map_or("-".to_owned(), |s| format!("{s} statements")),
                match f.confirmed {
                    Some(true) => "yes",
                    Some(false) => "no",
                    None => "-",
                },
                f.stopped,
                ms(f.ok_outside_ms),
                ms(f.ok_inside_ms),
                ms(f.ok_d1_ms),
            )
            .unwrap();
            if ceiling {
                let expected = rows_allowed.rows(f.columns.unwrap_or(1));
                write!(
                    out,
                    " {expected} | {} |",
                    if f.last_ok == Some(expected) {
                        "yes"
                    } else {
                        "NO"
                    }
                )
                .unwrap();
            }
            out.push('\n');
        }
        let texts: std::collections::BTreeSet<&str> = mine
            .iter()
            .map(|f| f.error.as_str())
            .filter(|e| !e.is_empty())
            .collect();
        if !texts.is_empty() {
            out.push_str("\nError texts, verbatim:\n\n");
            for t in texts {
                writeln!(out, "- `{t}`").unwrap();
            }
        }
        out.push_str(&memory::section(
            &format!("{}: the isolate's memory", kind.name()),
            "held",
            kind.unit(),
            &heap_points(rungs, kind),
        ));
    }
    out.push_str(&crate::reports::charts::section(charts));
    out
}

/// The isolate's largest peak at each value of each climb of `kind`, in climb order, for the
/// rungs that have one (calibration aside).
fn heap_points(rungs: &[RungRow], kind: LadderKind) -> Vec<HeapPoint> {
    let mut points: Vec<(usize, usize, HeapPoint)> = Vec::new();
    for rung in rungs {
        let Some(peak) = rung.isolate_heap_peak_bytes else {
            continue;
        };
        if rung.ladder != kind || rung.role == Role::Calibrate {
            continue;
        }
        match points
            .iter_mut()
            .find(|(climb, value, _)| (*climb, *value) == (rung.climb, rung.value))
        {
            Some((_, _, point)) => point.peak_bytes = point.peak_bytes.max(peak),
            None => points.push((
                rung.climb,
                rung.value,
                HeapPoint {
                    group: rung.held.clone(),
                    at: rung.value as f64,
                    peak_bytes: peak,
                },
            )),
        }
    }
    points.sort_by_key(|(climb, value, _)| (*climb, *value));
    points.into_iter().map(|(_, _, point)| point).collect()
}
