//! What sampling the Worker isolate's heap costs a sweep's timings, from a run that sampled half
//! of its probes (`--isolate-heap=alternate`), interleaved with the others in the run's
//! shuffled order: at each point, the median time of the sampled probes divided by that of the
//! unsampled ones, on each clock; over the points, the median of those ratios with its
//! order-statistic interval (the points' ratios are the unit that varies).

use std::fmt::Write as _;

use d1bench_core::{Outcome, Strategy};

use super::super::row::ProbeRow;
use crate::base::{HeapSampling, TargetKind};
use crate::stats::{CONFIDENCE, Summary, median};

/// One clock's cost of sampling: the per-point ratios (sampled ÷ not) and their summary.
#[derive(Debug, Clone, PartialEq)]
pub struct Cost {
    pub clock: &'static str,
    pub ratios: Vec<f64>,
    pub summary: Option<Summary>,
}

/// A point: its strategy, series and shape.
type Point = (Strategy, usize, usize, usize, usize);

/// A point's times on one clock: unsampled probes, then sampled ones.
type Sides = [Vec<f64>; 2];

/// A point with its outside and inside times.
type Timed = (Point, Sides, Sides);

/// The cost on each clock (`outside`, `inside`), over the local target's points that have both
/// sampled and unsampled ok probes; which probe was sampled is what `alternate` draws for its id.
pub fn costs(rows: &[ProbeRow]) -> Vec<Cost> {
    let mut points: Vec<Timed> = Vec::new();
    for r in rows {
        if r.target != TargetKind::Local || r.outcome != Outcome::Ok {
            continue;
        }
        let key = (r.strategy, r.series, r.columns, r.row_bytes, r.rows);
        let at = match points.iter().position(|p| p.0 == key) {
            Some(at) => at,
            None => {
                points.push((key, Default::default(), Default::default()));
                points.len() - 1
            }
        };
        let side = usize::from(HeapSampling::Alternate.samples(r.probe_id));
        points[at].1[side].push(r.outside_ms);
        points[at].2[side].push(r.inside_ms);
    }
    let ratios = |pick: fn(&Timed) -> &Sides| -> Vec<f64> {
        points
            .iter()
            .filter_map(|p| {
                let [without, with] = pick(p);
                let (a, b) = (median(with)?, median(without)?);
                (b > 0.0).then_some(a / b)
            })
            .collect()
    };
    [("outside", ratios(|p| &p.1)), ("inside", ratios(|p| &p.2))]
        .into_iter()
        .map(|(clock, ratios)| Cost {
            clock,
            summary: Summary::of(&ratios),
            ratios,
        })
        .collect()
}

/// The summary's section, or nothing when the run did not alternate its sampling.
pub fn section(rows: &[ProbeRow], alternate: bool) -> String {
    if !alternate {
        return String::new();
    }
    let mut out = format!(
        "\n## What sampling the isolate's heap cost\n\nThis run sampled the isolate's heap \
         (`--isolate-heap=alternate`) during half of its probes (one of each pair of probe ids, \
         which one drawn per pair), interleaved with the others in the shuffled order. At each point: the median time of \
         the sampled probes ÷ that of the unsampled ones; over the points: the median of those \
         ratios, with its {:.0}% order-statistic interval (n = points with both kinds of \
         probe).\n\n| clock | points | median ratio | interval | min | max |\n\
         | --- | --- | --- | --- | --- | --- |\n",
        100.0 * CONFIDENCE
    );
    for cost in costs(rows) {
        let Some(s) = cost.summary else {
            writeln!(out, "| {} | 0 | - | - | - | - |", cost.clock).unwrap();
            continue;
        };
        let ci = s.ci.map_or("-".into(), |ci| {
            format!(
                "[{:.3}, {:.3}] ({:.1}%)",
                ci.low,
                ci.high,
                100.0 * ci.coverage
            )
        });
        writeln!(
            out,
            "| {} | {} | {:.3} | {ci} | {:.3} | {:.3} |",
            cost.clock, s.n, s.median, s.min, s.max
        )
        .unwrap();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(probe_id: u64, columns: usize, ms: f64) -> ProbeRow {
        ProbeRow {
            target: TargetKind::Local,
            probe_id,
            columns,
            outside_ms: ms,
            inside_ms: ms / 2.0,
            ..crate::studies::sweep::row::tests_support::row()
        }
    }

    /// Sampled probes 10% slower at every point: every point's ratio is 1.1, and so is the
    /// median, on both clocks; a run that sampled every probe (or none) has no section.
    #[test]
    fn the_cost_is_the_sampled_probes_median_over_the_others_at_each_point() {
        let mut rows = Vec::new();
        for (i, columns) in [2, 8, 16, 32, 64, 100].into_iter().enumerate() {
            for repeat in 0..10 {
                let id = (i * 10 + repeat) as u64 + 1;
                let sampled = HeapSampling::Alternate.samples(id);
                let ms = (10.0 + i as f64) * if sampled { 1.1 } else { 1.0 };
                rows.push(row(id, columns, ms));
            }
        }
        let costs = costs(&rows);
        assert_eq!(costs.len(), 2);
        for cost in &costs {
            assert_eq!(cost.ratios.len(), 6, "{cost:?}");
            let s = cost.summary.unwrap();
            assert!((s.median - 1.1).abs() < 1e-9, "{cost:?}");
        }
        let text = section(&rows, true);
        assert!(text.contains("| outside | 6 | "), "{text}");
        assert_eq!(section(&rows, false), "");
    }
}
