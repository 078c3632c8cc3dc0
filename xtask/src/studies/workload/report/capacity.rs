//! The load-against-capacity section of a workload's summary, for runs whose points measured
//! their service time first: per point, the utilisation it ran at (rate × the service time
//! measured one request at a time), whether it saturated the target and why, how fast its queue
//! grew and the capacity it sustained (goodput) when it did, whether the load generator fell
//! behind on its own account, and the CPU seconds of the generator, workerd and wrangler while
//! it was measured, with a warning where the generator's share could have shaped the result.

use std::fmt::Write as _;

use super::load_stats::OpStats;
use crate::base::numbers::num;
use crate::studies::workload::row::PointRow;

/// The generator's CPU, in cores (CPU seconds per second measured), above which it could have
/// taken time the target needed on a machine of two cores.
pub const GENERATOR_CORES_WARNING: f64 = 0.25;

/// The section, or nothing for runs before points measured their service time.
pub fn section(stats: &[OpStats], points: &[PointRow]) -> String {
    if points.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n## Load against capacity\n\nBefore each point its arms' requests were sent one at a \
         time; `utilisation` is the point's rate × their mean time inside the invocation (the \
         share of time one server would be busy; a point planned above the profile's \
         `max-utilisation` ran at the rate that reaches it). A point **saturated** the target \
         when its requests in flight reached `max-in-flight` (in flight at the cap), its p50 latency was \
         more than 3 times the service time measured one at a time, or its latency grew faster \
         than 0.01 s per second of load; there the percentiles measure a queue, so the tables \
         say `saturated`, and this one gives the capacity it sustained (successful requests and \
         rows per second) and its queue growth. `generator late p99`: the load generator's own \
         lateness (due → handed to a thread), apart from the target. CPU: seconds while the \
         point was measured, of this process (the load generator; with in-process SQLite, the \
         target too), workerd and wrangler.{}\n\n\
         | target | point | rows | operations | arms | rate/s (planned) | utilisation | service ms p50 | latency ms p50 | load | queue growth s/s | capacity req/s (rows/s) | generator late p99 ms | CPU s generator / workerd / wrangler |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n",
    )
    .replace(
        "{}",
        if points.iter().any(|p| p.cpu_senders_s.is_some()) {
            " `sending`: of the process's seconds, those of the threads that sent the requests \
             and waited for their answers (each read from the thread's own times as it ended): \
             the HTTP client, or with in-process SQLite SQLite's work, the target's; the rest is \
             the timetable and recording the answers."
        } else {
            ""
        },
    );
    let mut warnings = Vec::new();
    for p in points {
        let arms: Vec<&OpStats> = stats
            .iter()
            .filter(|s| s.key.target == p.target && s.point == p.point)
            .collect();
        let Some(first) = arms.first() else {
            continue;
        };
        let load = &first.load;
        let mut ops: Vec<String> = Vec::new();
        for s in &arms {
            if !ops.contains(&s.key.op.to_string()) {
                ops.push(s.key.op.to_string());
            }
        }
        let goodput: f64 = arms.iter().map(|s| s.achieved_per_s).sum();
        let rows: f64 = arms.iter().map(|s| s.goodput_rows_per_s).sum();
        let opt = |v: Option<f64>| v.map_or("-".to_owned(), num);
        writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} ({}) | {:.2} | {} | {} | {} | {:.4} | {} | {}{} | {:.1}{} / {:.1} / {:.1} |",
            p.target,
            p.point,
            p.table_rows,
            ops.join(", "),
            p.arms,
            num(p.rate),
            num(p.rate_planned),
            p.utilisation,
            opt(load.service_p50_ms),
            opt(load.latency_p50_ms),
            load.describe(),
            load.queue_growth_s_per_s,
            if load.is_saturated() {
                format!("{goodput:.1} ({rows:.1})")
            } else {
                "-".into()
            },
            opt(load.late_p99_ms),
            if load.generator_behind { " **behind**" } else { "" },
            p.cpu_generator_s,
            p.cpu_senders_s
                .map_or(String::new(), |s| format!(" (sending {s:.1})")),
            p.cpu_workerd_s,
            p.cpu_wrangler_s,
        )
        .unwrap();
        // In-process, the sending threads run the target: the generator is the rest. Without
        // the threads' own times there is no share to tell apart.
        let in_process = p.cpu_workerd_s + p.cpu_wrangler_s == 0.0;
        let generator_s = match (in_process, p.cpu_senders_s) {
            (true, Some(sending)) => (p.cpu_generator_s - sending).max(0.0),
            _ => p.cpu_generator_s,
        };
        let cores = generator_s / p.measured_s.max(1e-9);
        let apart = !in_process || p.cpu_senders_s.is_some();
        if apart && cores > GENERATOR_CORES_WARNING {
            warnings.push(format!(
                "- **Warning**: at point {} on {} the load generator used {cores:.2} cores \
                 ({:.1} CPU s in {:.1} s): on two cores it could have taken time the target \
                 needed, and shaped this point's latency.",
                p.point, p.target, generator_s, p.measured_s,
            ));
        }
    }
    if !warnings.is_empty() {
        out.push('\n');
        out.push_str(&warnings.join("\n"));
        out.push('\n');
    }
    out
}
