//! The latency percentile plot of a workload run, one per point, as HdrHistogram draws it: each
//! arm's latency (log axis) against its percentile, spread on a log scale of 1 ÷ (1 − q) so the
//! tail (p99, p99.9) gets as much room as the body; the arms of the point overlaid, each
//! percentile with its 95% order-statistic interval as an error bar. Drawn with the one line
//! chart ([`crate::charts::line`]) as PNG, SVG and PDF.

use std::path::Path;

use anyhow::Result;
use d1bench_core::Strategy;

use super::load_stats::OpStats;
use crate::base::TargetKind;
use crate::charts::line::{self, LineChart, Point};
use crate::charts::style::{Scale, Shape, TickText, strategy_color, write};
use crate::reports::charts::{Drawn, measured_on};
use crate::stats::CONFIDENCE;

/// The percentiles plotted, where the arm has requests enough that each lies below its maximum.
pub const QUANTILES: [f64; 9] = [0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9995, 0.9999];

/// Where the percentile `q` lies on the x axis: 1 ÷ (1 − q), so p50 is 2, p90 10, p99 100.
pub fn x_of(q: f64) -> f64 {
    1.0 / (1.0 - q)
}

/// The markers of the arms, in turn.
const SHAPES: [Shape; 6] = [
    Shape::Circle,
    Shape::Square,
    Shape::Triangle,
    Shape::Diamond,
    Shape::TriangleDown,
    Shape::Pentagon,
];

/// Each arm's settings, in words: its operation first, then the settings of the key.
fn settings(s: &OpStats) -> Vec<String> {
    let k = &s.key;
    let mut parts = vec![
        k.op.to_string(),
        k.target.to_string(),
        format!("{} rows", k.table_rows),
        format!("index {}", k.index),
        format!("statements {}", k.preparation),
        format!("session {}", k.session),
        format!("retry {}", k.retry),
    ];
    if let Some(ttl) = k.ttl_s {
        parts.push(format!("TTL {ttl} s"));
    }
    parts
}

/// The legend label of each of `arms`: its operation, and the settings in which it differs
/// from the point's other arms.
pub fn arm_labels(arms: &[&OpStats]) -> Vec<String> {
    let all: Vec<Vec<String>> = arms.iter().map(|s| settings(s)).collect();
    all.iter()
        .map(|parts| {
            let shown: Vec<&str> = (parts.iter().enumerate())
                .filter(|(i, part)| *i == 0 || all.iter().any(|other| other.get(*i) != Some(part)))
                .map(|(_, part)| part.as_str())
                .collect();
            shown.join(", ")
        })
        .collect()
}

/// The points of one arm's line: each percentile its requests can show, with its interval.
fn points(s: &OpStats) -> Vec<Point> {
    let n = s.latencies.len();
    QUANTILES
        .iter()
        // One request above the percentile at least (less a rounding of 1 − q).
        .filter(|&&q| (n as f64) * (1.0 - q) >= 1.0 - 1e-9)
        .filter_map(|&q| s.latencies.percentile(q, CONFIDENCE))
        .map(|p| Point {
            x: x_of(p.q),
            y: p.ms,
            bar: p.ci.map(|c| (c.low, c.high)),
        })
        .collect()
}

/// The chart of the arms of one point.
pub fn chart(title: Option<String>, arms: &[&OpStats]) -> LineChart {
    let labels = arm_labels(arms);
    let lines: Vec<line::Line> = (arms.iter().zip(labels).enumerate())
        .map(|(i, (s, label))| {
            line::Line::solid(
                label,
                strategy_color(Strategy::ALL[i % Strategy::ALL.len()]),
                SHAPES[i % SHAPES.len()],
                points(s),
            )
        })
        .filter(|l| !l.points.is_empty())
        .collect();
    LineChart {
        title,
        x_label: "percentile (spaced as 1 ÷ (1 − q))".to_owned(),
        y_label: "latency from due time (ms)".to_owned(),
        x_scale: Scale::Log,
        x_range: line::x_range_of(&lines, Scale::Log),
        x_text: TickText::Percentile,
        y_scale: Scale::Log,
        y_range: line::y_range_of(&lines, Scale::Log),
        refusal_band: None,
        lines,
        secondary_heading: None,
        reference: None,
        dodge: true,
    }
}

/// The file stem of the plot of `point` on `target`.
pub fn name(target: TargetKind, point: usize) -> String {
    format!("latency-percentiles-{}-point-{point}", target.name())
}

/// The points of `stats` in report order, each with its arms: (target, point, arms).
pub fn by_point(stats: &[OpStats]) -> Vec<(TargetKind, usize, Vec<&OpStats>)> {
    let mut points: Vec<(TargetKind, usize, Vec<&OpStats>)> = Vec::new();
    for s in stats {
        match points
            .iter_mut()
            .find(|(t, p, _)| (*t, *p) == (s.key.target, s.point))
        {
            Some((_, _, arms)) => arms.push(s),
            None => points.push((s.key.target, s.point, vec![s])),
        }
    }
    points.sort_by_key(|(t, p, _)| (*t, *p));
    points
}

/// Draws `latency-percentiles-<target>-point-<n>.{png,svg,pdf}` into `dir` for every point of
/// `stats` with a successful request.
pub fn render(dir: &Path, stats: &[OpStats], titles: bool) -> Result<Vec<Drawn>> {
    let mut drawn = Vec::new();
    for (target, point, arms) in by_point(stats) {
        let chart_title = format!(
            "Latency percentiles at point {point} ({} requests/s scheduled), {}",
            crate::base::numbers::num(arms.iter().map(|s| s.offered_per_s).sum()),
            measured_on(target)
        );
        let chart = chart(titles.then(|| chart_title.clone()), &arms);
        if chart.lines.is_empty() {
            continue;
        }
        let name = name(target, point);
        let files = write(&chart, |extension| dir.join(format!("{name}.{extension}")))?;
        drawn.push(Drawn {
            name,
            caption: format!(
                "{chart_title}. Each arm's latency from when its request was due at each \
                 percentile its requests can show (nearest rank, with its 95% order-statistic \
                 interval as an error bar), the percentiles spread as HdrHistogram spreads them: \
                 log scale of 1 ÷ (1 − q); log latency axis."
            ),
            files,
        });
    }
    Ok(drawn)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies::workload::report::load_stats::stats;
    use crate::studies::workload::row::OpRow;
    use d1bench_core::workload::Operation;

    #[test]
    fn the_tail_gets_room_and_each_point_a_plot_with_its_arms_overlaid() {
        assert_eq!(x_of(0.5), 2.0);
        assert!((x_of(0.99) - 100.0).abs() < 1e-9);
        let mut rows = Vec::new();
        for (point, rate) in [(1, 50.0), (2, 100.0)] {
            for seq in 0..400u64 {
                for op in [Operation::PointRead, Operation::Write] {
                    rows.push(OpRow {
                        point,
                        rate,
                        op,
                        seq,
                        scheduled_ms: seq as f64 * 1000.0 / rate,
                        latency_ms: 1.0 + seq as f64 / 10.0,
                        ..crate::studies::workload::row::tests_support::row()
                    });
                }
            }
        }
        let stats = stats(&rows);
        let points = by_point(&stats);
        assert_eq!(points.len(), 2);
        assert_eq!(points[0].2.len(), 2);
        assert_eq!(arm_labels(&points[0].2), ["point-read", "write"]);
        let c = chart(None, &points[0].2);
        // 400 requests show p50 to p99.5, not p99.9.
        let xs: Vec<f64> = c.lines[0].points.iter().map(|p| p.x.round()).collect();
        assert_eq!(xs, [2.0, 4.0, 10.0, 20.0, 100.0, 200.0]);
        assert!(c.lines[0].points.windows(2).all(|w| w[0].y <= w[1].y));
        let dir = tempfile::tempdir().unwrap();
        let drawn = render(dir.path(), &stats, false).unwrap();
        assert_eq!(drawn.len(), 2);
        assert_eq!(drawn[1].name, "latency-percentiles-local-point-2");
        let svg = std::fs::read_to_string(dir.path().join(format!("{}.svg", drawn[0].name)));
        assert!(svg.unwrap().starts_with("<svg"));
    }
}
