//! A run's libraries beside its strategies (summary.md's "Libraries" section): at each point,
//! each library ÷ the fastest of the six strategies measured beside it in the same rounds (ms
//! per 1,000 rows, paired repeat by repeat as strategy ÷ bound is, with its interval over
//! sessions), and what the library sent D1 there, held against `base::orm::emits`; the A/A test
//! of that ratio ([`a_a`]: each point's sessions in two balanced halves judged against each
//! other); and each library's points as the README and the figure state them ([`library_points`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use d1bench_core::Outcome;

use super::points::{Line, Measure, Point, points};
use super::summary::target_lines;
use crate::base::OrmWrite;
use crate::base::numbers::num;
use crate::base::orm::{OrmLimit, emits};
use crate::stats::Summary;
use crate::stats::halves::{self, HalvesTest};
use crate::studies::sweep::Axis;
use crate::studies::sweep::row::ProbeRow;

/// One library at one point, as the README and the figure state it.
#[derive(Debug, Clone, PartialEq)]
pub struct LibraryPoint {
    pub write: OrmWrite,
    /// The point's series label (empty in a run without series).
    pub label: String,
    pub x: f64,
    /// The library's ms per 1,000 rows ÷ the fastest strategy's there, over sessions.
    pub ratio: Option<Summary>,
    /// Each session's median of that ratio, in session order: what [`a_a`] splits in halves.
    pub session_ratios: Vec<f64>,
    /// Rows in the largest INSERT (`12`, or `1–12` when the probes differ); `None` when no probe
    /// wrote the rows.
    pub rows_per_statement: Option<String>,
    /// D1 calls a write, as [`LibraryPoint::rows_per_statement`].
    pub d1_calls: Option<String>,
    /// The limit `base::orm::emits` says refuses the library's rows here, when no probe wrote them.
    pub refused_by: Option<OrmLimit>,
}

/// Each library's points of `rows` along `axis`, by library, then line, then x.
pub fn library_points(rows: &[ProbeRow], axis: Axis) -> Vec<LibraryPoint> {
    let strategies = points(rows, axis);
    orm_points(rows, axis)
        .into_iter()
        .map(|OrmPoint { orm, point }| {
            let ok: Vec<&&ProbeRow> = (point.rows.iter())
                .filter(|r| r.outcome == Outcome::Ok)
                .collect();
            let best = fastest(&strategies, &point).map(|(b, _)| b);
            let sent = |count: fn(&ProbeRow) -> usize| {
                (!ok.is_empty()).then(|| spread(ok.iter().map(|r| count(r))))
            };
            let first = point.rows[0];
            LibraryPoint {
                write: orm,
                label: point.line.label.clone(),
                x: point.x,
                ratio: best.and_then(|b| point.paired_ratio(b)),
                session_ratios: best.map_or(Vec::new(), |b| point.session_paired_ratios(b)),
                rows_per_statement: sent(|r| r.rows_per_statement),
                d1_calls: sent(|r| r.d1_calls),
                refused_by: (ok.is_empty())
                    .then(|| emits(orm.orm, orm.idiom, first.columns, first.rows).refused_by)
                    .flatten(),
            }
        })
        .collect()
}

/// The A/A test of library ÷ fastest: each point's sessions split into two halves balanced in
/// time, the halves' ratios judged against each other with Benjamini–Hochberg over the points
/// ([`halves::halves_test`]).
pub fn a_a(rows: &[ProbeRow], axis: Axis) -> HalvesTest {
    let points: Vec<Vec<f64>> = (library_points(rows, axis).into_iter())
        .map(|p| p.session_ratios)
        .collect();
    halves::halves_test(&points)
}

/// The A/A test's paragraph under the section's table.
fn a_a_paragraph(test: &HalvesTest) -> String {
    if test.judged == 0 {
        return "A/A test of `÷ fastest`: no point has two sessions in each half (four sessions \
                or more), so the halves are judged nowhere.\n"
            .to_owned();
    }
    format!(
        "A/A test of `÷ fastest`: each point's sessions in two halves balanced in time (of each \
         four, the first and last against the middle two), the halves' ratios judged against \
         each other (Welch's t on the logs, Benjamini–Hochberg at a 5% false discovery rate over \
         the points): called different at {} of {} points, where nothing differs by \
         construction. With half the sessions a side it could only have caught a difference \
         between halves of about {} at one point (80% power, among the points; median over \
         them), so what it checks is calibration: judged alone at 5%, the halves differ at {} of \
         those points, about {} by chance if the intervals are right.\n",
        test.called,
        test.judged,
        test.detectable.map_or("–".to_owned(), num),
        test.alone,
        test.alone_by_chance(),
    )
}

/// One library at one point: its rows, and the strategies' points beside it.
struct OrmPoint<'a> {
    orm: OrmWrite,
    point: Point<'a>,
}

/// The libraries' points of `rows` along `axis` (warm-ups and discarded rows left out), by
/// library, then line, then x.
fn orm_points(rows: &[ProbeRow], axis: Axis) -> Vec<OrmPoint<'_>> {
    let mut grouped: BTreeMap<(OrmWrite, Line, u64), Vec<&ProbeRow>> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.counts()) {
        let Some(orm) = row.orm_write() else { continue };
        let line = Line {
            target: row.target,
            label: row.label.clone(),
            strategy: row.strategy,
        };
        let x = row.at(axis);
        grouped
            .entry((orm, line, x.to_bits()))
            .or_default()
            .push(row);
    }
    // The bits of a non-negative x order as x does.
    grouped
        .into_iter()
        .map(|((orm, line, x), rows)| OrmPoint {
            orm,
            point: Point {
                line,
                x: f64::from_bits(x),
                rows,
            },
        })
        .collect()
}

/// The fastest strategy at the library's point (same target, label and x): the lowest estimate
/// of ms per 1,000 rows, chosen after the fact (so the ratio leans a little toward the library).
fn fastest<'a, 'b>(strategies: &'b [Point<'a>], at: &Point) -> Option<(&'b Point<'a>, Summary)> {
    strategies
        .iter()
        .filter(|p| p.line.target == at.line.target && p.line.label == at.line.label && p.x == at.x)
        .filter_map(|p| Some((p, p.summary(Measure::MsPer1000Rows)?)))
        .min_by(|a, b| a.1.median.total_cmp(&b.1.median))
}

/// `a` when every row says `a`, `a–b` when they differ: a count of what a library sent.
fn spread(values: impl Iterator<Item = usize>) -> String {
    let values: Vec<usize> = values.collect();
    match (values.iter().min(), values.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => lo.to_string(),
        (Some(lo), Some(hi)) => format!("{lo}–{hi}"),
        _ => "–".to_owned(),
    }
}

/// `0.45 (0.41–0.50) n=4`, or why there is none.
fn ratio_cell(ratio: Option<Summary>) -> String {
    match ratio {
        Some(s) => match s.ci {
            Some(ci) => format!(
                "{} ({}–{}) n={}",
                num(s.median),
                num(ci.low),
                num(ci.high),
                s.n
            ),
            None => format!("{} n={}", num(s.median), s.n),
        },
        None => "–".to_owned(),
    }
}

/// summary.md's section on the run's libraries; `None` when it measured none.
pub fn section(rows: &[ProbeRow], axis: Axis) -> Option<String> {
    let orm_rows: Vec<ProbeRow> = rows.iter().filter(|r| r.orm.is_some()).cloned().collect();
    if orm_rows.is_empty() {
        return None;
    }
    let strategies = points(rows, axis);
    let mut out = String::from(
        "## Libraries beside the strategies\n\n\
         Each library wrote the same rows as the strategies, at the same points, in the same \
         shuffled rounds of the same Worker (`worker-orm/`, whose six strategies are the \
         JavaScript Worker's own code). `÷ fastest`: the library's ms per 1,000 rows ÷ the \
         fastest strategy's at that point (the lowest estimate there, chosen after the fact), \
         paired repeat by repeat; over sessions, the geometric mean of each session's median \
         ratio with its 95% interval (Student's t over sessions). Below 1 the library was \
         faster. What it sent is what the Worker's counting wrapper of the D1 binding saw: \
         INSERT statements, the rows of the largest (D1's `meta.changes`), the values it bound, \
         and the D1 calls by method.\n\n",
    );
    let mut header = vec![axis.name().to_owned()];
    let labelled = orm_rows.iter().any(|r| !r.label.is_empty());
    if labelled {
        header.push("series".into());
    }
    header.extend(
        [
            "library",
            "ms/1k rows",
            "fastest strategy",
            "÷ fastest",
            "statements",
            "rows/statement",
            "bound/statement",
            "D1 calls",
            "as modelled",
        ]
        .map(String::from),
    );
    writeln!(out, "| {} |", header.join(" | ")).unwrap();
    writeln!(out, "|{}", " --- |".repeat(header.len())).unwrap();
    let mut unlike: Vec<String> = Vec::new();
    for OrmPoint { orm, point } in orm_points(rows, axis) {
        let ok: Vec<&&ProbeRow> = point
            .rows
            .iter()
            .filter(|r| r.outcome == Outcome::Ok)
            .collect();
        let columns = point.rows[0].columns;
        let model = emits(orm.orm, orm.idiom, columns, point.rows[0].rows);
        let time = match point.summary(Measure::MsPer1000Rows) {
            Some(s) => num(s.median),
            None => {
                let error = point.rows.iter().find(|r| !r.error.is_empty());
                let limit = model
                    .refused_by
                    .map_or(String::new(), |l| format!(", stopped by {}", l.prose()));
                format!(
                    "{}{limit}: `{}`",
                    point.rows[0].outcome,
                    error.map_or(String::new(), |r| r.error.trim().replace('`', "'"))
                )
            }
        };
        let best = fastest(&strategies, &point);
        let ratio = best.and_then(|(b, _)| point.paired_ratio(b));
        let mut line = vec![axis.format(point.x)];
        if labelled {
            line.push(point.line.label.clone());
        }
        let differs: Vec<&str> = (ok.iter())
            .map(|r| r.unlike_model.as_str())
            .filter(|u| !u.is_empty())
            .collect();
        if let Some(first) = differs.first() {
            unlike.push(format!(
                "{orm} at {} {}: {first}",
                axis.format(point.x),
                axis.name()
            ));
        }
        line.extend([
            orm.to_string(),
            time,
            best.map_or("–".into(), |(b, s)| {
                format!("{} ({})", b.line.strategy, num(s.median))
            }),
            ratio_cell(ratio),
            spread(ok.iter().map(|r| r.statements_sent)),
            spread(ok.iter().map(|r| r.rows_per_statement)),
            spread(ok.iter().filter_map(|r| r.bound_per_statement)),
            match ok.first() {
                Some(r) => format!(
                    "{} ({})",
                    spread(ok.iter().map(|r| r.d1_calls)),
                    r.d1_call_kinds
                ),
                None => "–".to_owned(),
            },
            match (ok.is_empty(), differs.is_empty()) {
                (true, _) => "–".to_owned(),
                (false, true) => {
                    format!("yes ({} × {})", model.statements, model.rows_per_statement)
                }
                (false, false) => format!("no, {} of {}", differs.len(), ok.len()),
            },
        ]);
        writeln!(out, "| {} |", line.join(" | ")).unwrap();
    }
    if !unlike.is_empty() {
        writeln!(
            out,
            "\nWhere a library sent other than `base::orm::emits` models: {}.",
            unlike.join("; ")
        )
        .unwrap();
    }
    writeln!(out, "\n{}", a_a_paragraph(&a_a(rows, axis))).unwrap();
    writeln!(
        out,
        "The libraries' probes, reconciled by count and content checksum like the strategies':\n\n{}",
        target_lines(&orm_rows).join("\n")
    )
    .unwrap();
    Some(out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::records::csv;

    /// The smoke run of `orm-sweep` (two sessions) the README's section is tested against.
    pub(crate) fn smoke_rows() -> Vec<ProbeRow> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden/orm-sweep-smoke/results.csv");
        csv::read(&path).unwrap()
    }

    /// The smoke run with its two sessions run again after it, as sessions 2 and 3: four
    /// sessions, halves {0, 3} and {1, 2} alike by construction.
    pub(crate) fn four_sessions() -> Vec<ProbeRow> {
        let rows = smoke_rows();
        let again = rows.iter().cloned().map(|mut r| {
            r.session += 2;
            r
        });
        rows.clone().into_iter().chain(again).collect()
    }

    #[test]
    fn the_a_a_test_judges_every_point_a_library_wrote_with_four_sessions() {
        // Two sessions: no half of two, nothing judged, and the section says so.
        let rows = smoke_rows();
        assert_eq!(a_a(&rows, Axis::Columns).judged, 0);
        let text = section(&rows, Axis::Columns).unwrap();
        assert!(text.contains("the halves are judged nowhere"), "{text}");
        // Four: every point but Prisma's refused 100 columns (18 less 1), none called.
        let rows = four_sessions();
        let test = a_a(&rows, Axis::Columns);
        assert_eq!((test.called, test.judged, test.alone), (0, 17, 0));
        let text = section(&rows, Axis::Columns).unwrap();
        assert!(
            text.contains("A/A test of `÷ fastest`")
                && text.contains("called different at 0 of 17"),
            "{text}"
        );
    }

    #[test]
    fn each_librarys_points_say_what_it_sent_or_what_refused_it() {
        let rows = smoke_rows();
        let points = library_points(&rows, Axis::Columns);
        assert_eq!(points.len(), 18);
        let prisma_100 = (points.iter())
            .find(|p| p.write.orm == crate::base::orm::Orm::Prisma && p.x == 100.0)
            .unwrap();
        assert_eq!(prisma_100.refused_by, Some(OrmLimit::PrismaMaxBindValues));
        assert_eq!(
            (prisma_100.ratio, prisma_100.rows_per_statement.as_deref()),
            (None, None)
        );
        let drizzle_8 = (points.iter()).find(|p| p.write.to_string() == "drizzle" && p.x == 8.0);
        let drizzle_8 = drizzle_8.unwrap();
        assert_eq!(drizzle_8.rows_per_statement.as_deref(), Some("12"));
        assert_eq!(drizzle_8.d1_calls.as_deref(), Some("1"));
        assert_eq!(drizzle_8.session_ratios.len(), 2);
    }
}
