//! The README's answer to "D1 or a Durable Object's SQLite?", generated from the committed run
//! whose sessions alternate the local D1 with the Worker's SQLite-backed Durable Object
//! (`docs/runs/d1-beside-do`, `--baseline do`): local ÷ do on the inside clock per strategy over
//! the column counts, how many points differ after Benjamini–Hochberg with the A/A test of that
//! judgement ([`baseline`]), and where the two targets' limits
//! differ (`reports/parity-local.csv` against `reports/parity-do.csv`); a test fails when the
//! README and those files disagree.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use d1bench_core::Strategy;

use crate::base::TargetKind;
use crate::base::numbers::num;
use crate::records::csv;
use crate::stats::median;
use crate::studies::ladder::report::parity::{Enforced, ParityRow};
use crate::studies::sweep::Axis;
use crate::studies::sweep::report::baseline;

/// The committed run of the local D1 beside the Durable Object, relative to the project's root.
pub const D1_BESIDE_DO: &str = "docs/runs/d1-beside-do";

/// The section, from the run and the parity tables under `root`.
pub fn section(root: &Path) -> Result<String> {
    let (record, rows, summary) = super::findings::sweep_run(&root.join(D1_BESIDE_DO))
        .with_context(|| format!("{D1_BESIDE_DO} is not a sweep run d1bench can read"))?;
    let axis = record.run.x_axis.unwrap_or(Axis::Columns);
    let judged = baseline::judge(&rows, axis, TargetKind::Local)
        .with_context(|| format!("{D1_BESIDE_DO} has no Durable Object sessions beside local's"))?;
    let ratios = |strategy: Strategy| -> Vec<(f64, f64, f64)> {
        summary
            .iter()
            .filter(|r| {
                r.target == TargetKind::Local
                    && r.strategy == strategy
                    && r.measure == TargetKind::Do.ratio_stat()
                    && r.label.is_empty()
            })
            .filter_map(|r| Some((r.median?, r.ci_low?, r.ci_high?)))
            .collect()
    };
    let sessions = record.run.sessions.unwrap_or(0);
    let mut parts = Vec::new();
    for strategy in Strategy::ALL {
        let found = ratios(strategy);
        if found.is_empty() {
            continue;
        }
        let mut medians: Vec<f64> = found.iter().map(|r| r.0).collect();
        medians.sort_by(f64::total_cmp);
        let spread = if medians.len() > 1 {
            format!(" ({}–{})", num(medians[0]), num(medians[medians.len() - 1]))
        } else {
            String::new()
        };
        parts.push(format!(
            "{strategy} {}{spread}",
            num(median(&medians).unwrap_or(f64::NAN))
        ));
    }
    let minutes = super::run_minutes(&record).unwrap_or(f64::NAN);
    let mut out = format!(
        "**D1 or a Durable Object?** The local D1 alternating with the Worker writing through a \
         SQLite-backed Durable Object ([`{D1_BESIDE_DO}/`]({D1_BESIDE_DO}/summary.md): run `{}`, \
         commit `{}`, {sessions} sessions each): D1 ÷ DO on the inside clock, median over column \
         counts (range): {}. Over all {} points (Benjamini–Hochberg at 5%) D1 is slower at \
         {}, faster at {}; an A/A test (halves of each point's sessions) calls {} of {} (alone \
         at 5%: {}, ~{} by chance). ",
        record.run.id,
        record.git.commit.short(7),
        parts.join(", "),
        judged.points,
        judged.corrected.0,
        judged.corrected.1,
        judged.a_a.called,
        judged.a_a.judged,
        judged.a_a.alone,
        judged.a_a.alone_by_chance(),
    );
    write!(out, "{} ", limits_line(root)?).unwrap();
    writeln!(
        out,
        "Reproduce: `cargo xtask reproduce --only d1-beside-do` ({minutes:.0} min here)."
    )
    .unwrap();
    Ok(out)
}

/// Which limits the Durable Object's ladders found otherwise than the local D1's: a refusal on
/// one and not the other, or at another value.
pub(super) fn limits_line(root: &Path) -> Result<String> {
    let read = |target: &str| -> Result<Vec<ParityRow>> {
        csv::read(&root.join(format!("reports/parity-{target}.csv")))
            .with_context(|| format!("reports/parity-{target}.csv cannot be read"))
    };
    let (local, durable) = (read("local")?, read("do")?);
    let mut same = Vec::new();
    let mut differ = Vec::new();
    for d in &durable {
        let Some(l) = local.iter().find(|l| l.ladder == d.ladder) else {
            continue;
        };
        // Neither refusing is the same finding, whatever cap each climb stopped at.
        let neither = l.enforced == Enforced::No && d.enforced == Enforced::No;
        if neither || (l.enforced == d.enforced && l.found == d.found) {
            same.push(d.limit.clone());
        } else {
            differ.push(format!(
                "{}: D1 {}, the object {}",
                d.limit, l.found, d.found
            ));
        }
    }
    let total = same.len() + differ.len();
    Ok(if differ.is_empty() {
        format!(
            "The object's ladders ([limits](docs/limits.md)) found the local D1's value for all \
             {total} limits."
        )
    } else {
        format!(
            "The object's ladders ([limits](docs/limits.md)) found the local D1's value for {} of \
             {total} limits; otherwise {}.",
            same.len(),
            differ.join("; ")
        )
    })
}
