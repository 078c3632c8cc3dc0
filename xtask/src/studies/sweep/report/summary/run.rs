//! The lines summary.md gives about the run itself rather than its points: each target's
//! reconciliation totals (also printed at the end of a run) and what the load average says of
//! the machine.

use crate::base::TargetKind;
use crate::records::{RunRecord, Totals};
use crate::studies::sweep::row::ProbeRow;

/// The reconciliation totals of each target in `rows` (warm-ups are not in results.csv, so
/// they are taken from run.toml's totals).
pub fn reconciliation_lines(rows: &[ProbeRow], record: &RunRecord) -> Vec<String> {
    let mut lines = target_lines(rows);
    if let Some(all) = &record.reconciliation {
        lines.push(format!("- whole run (run.toml): {}", all.line("probes")));
    }
    lines
}

/// The reconciliation totals of each target in `rows` alone, one line each.
pub fn target_lines(rows: &[ProbeRow]) -> Vec<String> {
    let mut targets: Vec<TargetKind> = rows.iter().map(|r| r.target).collect();
    targets.sort();
    targets.dedup();
    targets
        .into_iter()
        .map(|target| {
            let mut totals = Totals::default();
            for row in rows.iter().filter(|r| r.target == target) {
                row.tally(&mut totals);
            }
            let name = if TargetKind::baseline_among(rows.iter().map(|r| r.target)) == Some(target)
            {
                format!("{} (baseline)", target.prose())
            } else {
                format!("`{target}`")
            };
            format!("- {name}: {}", totals.line("probes"))
        })
        .collect()
}

/// What the load average says of the machine during the run (whether other work shared it),
/// and the CPU limit the run was measured under, when one was set.
pub(super) fn load_line(m: &crate::records::run_record::Machine) -> String {
    let fmt = |load: Option<f64>| load.map_or("not recorded".to_owned(), |l| format!("{l:.2}"));
    let busy = !m.loads_above_cpus().is_empty();
    let verdict = if m.load_at_start.is_none() && m.load_at_end.is_none() {
        ""
    } else if busy {
        ": above the CPU count, so other work shared the machine and the times carry its interference"
    } else {
        ": at most the CPU count"
    };
    let limit = m.cpu_limit.as_ref().map_or(String::new(), |limit| {
        format!(
            "- **CPU limit: {limit}**: the run measured that limit as much as the machine; its \
             times are not comparable with runs made without it\n"
        )
    });
    format!(
        "- load average (1 min): {} at the start, {} at the end{verdict}\n{limit}",
        fmt(m.load_at_start),
        fmt(m.load_at_end)
    )
}
