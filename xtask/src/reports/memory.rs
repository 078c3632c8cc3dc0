//! The Worker isolate's measured peak heap against the documented 128 MB: the table of peaks a
//! summary shows and where, along its axis, a straight line through them reaches the limit.

use std::fmt::Write as _;

use crate::base::numbers::thousands;

/// A Worker's isolate may use 128 MB (Cloudflare's Workers limits page); read as 128 × 2²⁰
/// bytes, the larger of the two readings (128 × 10⁶ is 4.6% less).
pub const WORKER_MEMORY_LIMIT_BYTES: u64 = 128 * 1024 * 1024;

/// One measured peak: where it was taken on the summary's axis, and its bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct HeapPoint {
    /// What the table's first columns say (a climb's held values, a strategy).
    pub group: String,
    /// The value on the axis (statements, columns, ...).
    pub at: f64,
    /// The largest peak measured there, in bytes.
    pub peak_bytes: u64,
}

/// Where a least-squares line through `points` (axis value, bytes) reaches
/// [`WORKER_MEMORY_LIMIT_BYTES`]; `None` with fewer than two distinct axis values or a line that
/// does not rise.
pub fn limit_reached_at(points: &[(f64, u64)]) -> Option<f64> {
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1 as f64).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = points
        .iter()
        .map(|p| (p.0 - mean_x) * (p.1 as f64 - mean_y))
        .sum();
    if points.len() < 2 || sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    (slope > 0.0).then(|| mean_x + (WORKER_MEMORY_LIMIT_BYTES as f64 - mean_y) / slope)
}

/// Bytes as MiB with one decimal: `96.3 MiB`.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// The section of a summary on the isolate's memory, for `points` in `unit` along the axis, or
/// nothing when no point was measured (a run on sqlite or remote, or before it was measured).
pub fn section(heading: &str, group_header: &str, unit: &str, points: &[HeapPoint]) -> String {
    if points.is_empty() {
        return String::new();
    }
    let mut out = format!("\n## {heading}\n\n");
    out.push_str(
        "The largest the Worker's isolate got while each measured request ran: V8's heap in use \
         and its ArrayBuffers (the Worker's wasm memory among them), asked of the inspector of \
         `wrangler dev` every 10 ms (`targets/local/heap.rs`) after a full garbage collection \
         before the request; the largest over the repeats. The heap in use counts garbage not \
         collected yet, so a peak is an upper bound of what the request held alive, and two \
         runs can differ by the collector's timing. D1's own SQLite runs outside the isolate \
         and is not in it. Against the 128 MB a Worker's isolate may use (read as 128 MiB).\n\n",
    );
    writeln!(
        out,
        "| {group_header} | {unit} | isolate peak | of 128 MiB |\n| --- | --- | --- | --- |"
    )
    .unwrap();
    for p in points {
        writeln!(
            out,
            "| {} | {} | {} | {:.1}% |",
            if p.group.is_empty() { "-" } else { &p.group },
            axis_text(p.at),
            mib(p.peak_bytes),
            100.0 * p.peak_bytes as f64 / WORKER_MEMORY_LIMIT_BYTES as f64
        )
        .unwrap();
    }
    let mut groups: Vec<&str> = points.iter().map(|p| p.group.as_str()).collect();
    groups.dedup();
    out.push('\n');
    for group in groups {
        let mine: Vec<(f64, u64)> = points
            .iter()
            .filter(|p| p.group == group)
            .map(|p| (p.at, p.peak_bytes))
            .collect();
        let name = if group.is_empty() {
            String::new()
        } else {
            format!("{group}: ")
        };
        let past = mine.iter().find(|p| p.1 >= WORKER_MEMORY_LIMIT_BYTES);
        let line = match (past, limit_reached_at(&mine)) {
            (Some(p), _) => format!(
                "- {name}past 128 MiB at {} {unit} already (measured).",
                axis_text(p.0)
            ),
            (None, Some(at)) => format!(
                "- {name}a straight line through its {} peaks reaches 128 MiB at about {} {unit}{}.",
                mine.len(),
                axis_text(at.round()),
                if at > mine.iter().map(|p| p.0).fold(f64::MIN, f64::max) {
                    " (beyond the largest measured: an extrapolation)"
                } else {
                    ""
                }
            ),
            (None, None) => {
                format!("- {name}no rise to extrapolate from: 128 MiB not reached where measured.")
            }
        };
        writeln!(out, "{line}").unwrap();
    }
    out
}

fn axis_text(at: f64) -> String {
    if at.fract() == 0.0 && at >= 0.0 {
        thousands(at as usize)
    } else {
        format!("{at}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_through_the_peaks_reaches_the_limit_where_it_should() {
        // 1 MiB plus 1 KiB per statement: 128 MiB at 127 × 1,024 statements.
        let per = |n: u64| (n, (1 << 20) + n * 1024);
        let points: Vec<(f64, u64)> = [1_000, 2_000, 4_000]
            .into_iter()
            .map(per)
            .map(|(n, b)| (n as f64, b))
            .collect();
        let at = limit_reached_at(&points).unwrap();
        assert!((at - 127.0 * 1024.0).abs() < 1e-6, "{at}");
        assert_eq!(limit_reached_at(&points[..1]), None, "one point: no line");
        assert_eq!(limit_reached_at(&[(1.0, 10), (2.0, 5)]), None, "falls");
        assert_eq!(limit_reached_at(&[(1.0, 10), (1.0, 20)]), None, "one x");
    }

    #[test]
    fn the_section_is_empty_without_points_and_says_where_the_limit_is() {
        assert_eq!(section("h", "held", "statements", &[]), "");
        let point = |at: f64, peak_bytes: u64| HeapPoint {
            group: "mode=one-batch".into(),
            at,
            peak_bytes,
        };
        let text = section(
            "Memory",
            "held",
            "statements",
            &[point(1_000.0, 2 << 20), point(2_000.0, 3 << 20)],
        );
        assert!(
            text.contains("| mode=one-batch | 1,000 | 2.0 MiB | 1.6% |"),
            "{text}"
        );
        assert!(
            text.contains("reaches 128 MiB at about 127,000 statements (beyond the largest"),
            "{text}"
        );
        let text = section("Memory", "held", "statements", &[point(5.0, 200 << 20)]);
        assert!(
            text.contains("past 128 MiB at 5 statements already"),
            "{text}"
        );
    }
}
