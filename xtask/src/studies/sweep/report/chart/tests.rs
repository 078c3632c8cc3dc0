//! Tests of the sweep charts: points and their intervals, captions, axes, legends, dodging, and
//! the three files of every chart for both kinds of axis.
//!
//! Past 600 lines as one file: every test builds its probe rows with the one helper `row` below.

use super::figure::figure;
use super::*;
use crate::charts::line::LineChart;
use crate::charts::style::{
    BASELINE, DODGE_PT, Sample, THIN_PT, drawn_svg, fraction, px, strategy_shape,
};

fn row(
    strategy: Strategy,
    columns: usize,
    repeat: usize,
    outcome: &str,
    outside_ms: f64,
) -> ProbeRow {
    ProbeRow {
        experiment: "test".into(),
        target: TargetKind::Local,
        strategy,
        columns,
        row_bytes: columns * 10,
        rows: 500,
        rows_per_statement: match strategy {
            Strategy::Bound => (100 / columns).max(1),
            Strategy::Literal => 500,
            Strategy::PerRow | Strategy::BatchedRows => 1,
            Strategy::Json | Strategy::Exec | Strategy::Copy => 500,
        },
        repeat,
        outcome: outcome.parse().unwrap(),
        refusal: (outcome == "refused").then_some(d1bench_core::RefusalKind::TooManyVariables),
        rows_expected: 500,
        rows_present: 500,
        inside_ms: outside_ms / 2.0,
        outside_ms,
        d1_ms: Some(outside_ms / 4.0),
        overhead_ms: Some(outside_ms / 2.0),
        reconciled: outcome == "ok",
        ..crate::studies::sweep::row::tests_support::row()
    }
}

const LOCAL: TargetKind = TargetKind::Local;

#[test]
fn points_are_the_median_and_its_order_statistic_interval_over_repeats() {
    let rows = vec![
        row(Strategy::Bound, 4, 0, "ok", 10.0),
        row(Strategy::Bound, 4, 1, "ok", 30.0),
        row(Strategy::Bound, 4, 2, "ok", 20.0),
        row(Strategy::Bound, 8, 0, "ok", 50.0),
        row(Strategy::Bound, 8, 1, "ok", 40.0),
        row(Strategy::PerRow, 4, 0, "ok", 500.0),
    ];
    let series = summarize(&rows, Axis::Columns, Measure::MsPer1000Rows, LOCAL);
    assert_eq!(series.len(), 2);
    assert_eq!(series[0].strategy, Strategy::Bound);
    // 500 rows per probe: ms per 1,000 rows is twice the probe's time; the error bar is the
    // median's interval from stats.rs: [min, max] at 3 and 2 repeats.
    let at_4 = Summary::of(&[20.0, 60.0, 40.0]).unwrap();
    let at_8 = Summary::of(&[100.0, 80.0]).unwrap();
    assert_eq!(
        series[0].points,
        vec![Point::of(4.0, at_4), Point::of(8.0, at_8)]
    );
    assert_eq!(series[0].points[0].median, 40.0);
    assert_eq!(series[0].points[0].repeats, 3);
    let p = &series[0].points[0];
    assert_eq!((p.low, p.high, p.coverage), (20.0, 60.0, 0.75));
    assert_eq!(series[1].strategy, Strategy::PerRow);
    assert_eq!(series[1].points[0].median, 1000.0);
    assert_eq!(
        (series[1].points[0].low, series[1].points[0].high),
        (1000.0, 1000.0),
        "one repeat: no interval"
    );
    assert!(series.iter().all(|s| s.refused.is_empty() && !s.baseline));
}

#[test]
fn captions_give_the_repeats_and_what_the_error_bars_cover() {
    let at = |repeats: usize, columns: usize| {
        (0..repeats).map(move |r| row(Strategy::Bound, columns, r, "ok", 10.0 + r as f64))
    };
    let caption = |rows: Vec<ProbeRow>| {
        time_chart(&rows, Axis::Columns, "t", LOCAL)
            .unwrap()
            .caption
    };
    let five = caption(at(5, 4).chain(at(5, 8)).collect());
    assert!(
        five.contains(
            "n = 5 repeats per point; error bars: the median's order-statistic confidence \
             interval within one session, which below 6 repeats is [min, max] and covers less \
             than 95% (here as little as 93.8%)"
        ),
        "{five}"
    );
    let mixed = caption(at(6, 4).chain(at(30, 8)).collect());
    assert!(
        mixed.contains(
            "n = 6 to 30 repeats per point; error bars: the median's 95% order-statistic \
             confidence interval within one session."
        ),
        "{mixed}"
    );
    let chart = time_chart(
        &at(6, 4).chain(at(30, 8)).collect::<Vec<_>>(),
        Axis::Columns,
        "t",
        LOCAL,
    )
    .unwrap();
    let legend: Vec<_> = figure(&chart)
        .legend()
        .into_iter()
        .map(|(_, l)| l)
        .collect();
    assert_eq!(legend, ["bound (n=6–30)"]);
    let one = caption(at(1, 4).collect());
    assert!(
        one.contains("n = 1 repeat per point in one session, so no error bars."),
        "{one}"
    );
    // Two repeats in each of three sessions: the bars are between sessions.
    let sessions: Vec<ProbeRow> = (0..3)
        .flat_map(|session| {
            at(2, 4).map(move |r| ProbeRow {
                session,
                outside_ms: r.outside_ms * (1.0 + session as f64 / 10.0),
                ..r
            })
        })
        .collect();
    let over = caption(sessions.clone());
    assert!(
        over.contains(
            "n = 6 repeats per point over 3 sessions; points: the geometric mean of 3 sessions' \
             medians; error bars: its 95% interval between sessions."
        ),
        "{over}"
    );
    let series = summarize(&sessions, Axis::Columns, Measure::MsPer1000Rows, LOCAL);
    let p = &series[0].points[0];
    assert_eq!((p.repeats, p.sessions, p.coverage), (6, 3, 0.95));
    assert!(p.low < p.median && p.median < p.high, "{p:?}");
}

#[test]
fn the_baseline_and_labelled_series_are_lines_of_their_own() {
    let mut rows = vec![
        row(Strategy::Literal, 4, 0, "ok", 10.0),
        row(Strategy::Bound, 4, 0, "ok", 20.0),
    ];
    let mut labelled = row(Strategy::Bound, 4, 0, "ok", 30.0);
    labelled.label = "all non-ASCII".into();
    rows.push(labelled);
    for strategy in [Strategy::Bound, Strategy::Literal] {
        let mut baseline = row(strategy, 4, 0, "ok", 1.0);
        baseline.target = TargetKind::Sqlite;
        rows.push(baseline);
    }
    let series = summarize(&rows, Axis::Columns, Measure::MsPer1000Rows, LOCAL);
    let lines: Vec<_> = series.iter().map(|s| (s.name(), s.baseline)).collect();
    assert_eq!(
        lines,
        [
            ("bound".to_owned(), false),
            ("literal".to_owned(), false),
            ("bound, all non-ASCII".to_owned(), false),
            ("bound".to_owned(), true),
            ("literal".to_owned(), true),
        ]
    );
    let chart = time_chart(&rows, Axis::Columns, "t", LOCAL).unwrap();
    let legend = figure(&chart).legend();
    let labels: Vec<_> = legend.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(
        labels,
        [
            "bound (n=1)",
            "literal (n=1)",
            "bound, all non-ASCII (n=1)",
            "bare SQLite (n=1):",
            "bound",
            "literal",
        ]
    );
    // The baseline's lines under their heading, each its own entry in the baseline's grey,
    // told apart by its strategy's marker.
    assert_eq!(legend[3].0, Sample::Heading);
    let baseline_samples: Vec<_> = legend[4..].iter().map(|(s, _)| s.clone()).collect();
    assert_eq!(
        baseline_samples,
        [Strategy::Bound, Strategy::Literal].map(|strategy| Sample::Line {
            color: BASELINE,
            points: THIN_PT,
            dashed: true,
            marker: Some(strategy_shape(strategy)),
            small_marker: true,
        })
    );
    assert!(
        chart.caption.contains("bare SQLite (baseline)"),
        "{}",
        chart.caption
    );
    // The baseline plans the same statements and has one clock: only the time chart has it.
    let rows_chart = rows_per_statement_chart(&rows, Axis::Columns, "t", LOCAL).unwrap();
    assert!(rows_chart.series.iter().all(|s| !s.baseline));
    let overhead = overhead_chart(&rows, Axis::Columns, "t", LOCAL).unwrap();
    assert!(overhead.series.iter().all(|s| !s.baseline));
    // A run on the sqlite target itself draws its rows as the main lines.
    let sqlite_run = summarize(
        &rows,
        Axis::Columns,
        Measure::MsPer1000Rows,
        TargetKind::Sqlite,
    );
    assert!(
        sqlite_run
            .iter()
            .any(|s| !s.baseline && s.strategy == Strategy::Literal)
    );
}

#[test]
fn refused_only_points_are_refusals_and_error_rows_are_ignored() {
    let rows = vec![
        row(Strategy::Literal, 4, 0, "ok", 10.0),
        // Mixed: the ok repeat is the point, no refusal mark.
        row(Strategy::Literal, 8, 0, "ok", 20.0),
        row(Strategy::Literal, 8, 1, "refused", 1.0),
        // Every repeat refused (an error alongside does not change that).
        row(Strategy::Literal, 16, 0, "refused", 1.0),
        row(Strategy::Literal, 16, 1, "error", 9999.0),
        // Errors only: neither a point nor a refusal.
        row(Strategy::Literal, 32, 0, "error", 9999.0),
        row(Strategy::Bound, 32, 0, "error", 9999.0),
    ];
    let series = summarize(&rows, Axis::Columns, Measure::MsPer1000Rows, LOCAL);
    assert_eq!(series.len(), 1, "bound had only errors: {series:?}");
    let literal = &series[0];
    let xs: Vec<_> = literal.points.iter().map(|p| p.x).collect();
    assert_eq!(xs, [4.0, 8.0]);
    assert_eq!(literal.points[1].median, 40.0);
    assert_eq!(literal.points[1].repeats, 1);
    assert_eq!(literal.refused, [16.0]);
}

#[test]
fn rows_per_statement_counts_refused_probes_too() {
    let rows = vec![
        row(Strategy::Bound, 50, 0, "ok", 10.0),
        row(Strategy::Bound, 200, 0, "refused", 1.0),
        row(Strategy::Bound, 400, 0, "error", 1.0),
    ];
    let series = summarize(&rows, Axis::Columns, Measure::RowsPerStatement, LOCAL);
    let points: Vec<_> = series[0].points.iter().map(|p| (p.x, p.median)).collect();
    assert_eq!(points, [(50.0, 2.0), (200.0, 1.0)]);
    assert_eq!(series[0].refused, [200.0]);
}

#[test]
fn time_chart_puts_refusals_in_a_band_above_the_data() {
    let rows = vec![
        row(Strategy::Bound, 50, 0, "ok", 10.0),
        row(Strategy::Bound, 200, 0, "refused", 1.0),
    ];
    let chart = time_chart(&rows, Axis::Columns, "t", LOCAL).unwrap();
    let (lo, hi) = chart.refusal_band.unwrap();
    assert!(lo > 20.0 && hi == chart.y_range.1, "{chart:?}");
    assert_eq!(chart.x_scale, Scale::Linear);
}

#[test]
fn charts_without_anything_to_plot_are_skipped_with_a_reason() {
    let refused = vec![row(Strategy::Bound, 200, 0, "refused", 1.0)];
    let skip = time_chart(&refused, Axis::Columns, "t", LOCAL).unwrap_err();
    assert!(
        skip.to_string()
            .contains("no probe succeeded (1 refused, 0 failed)")
    );
    assert!(rows_per_statement_chart(&refused, Axis::Columns, "t", LOCAL).is_ok());

    let failed = vec![row(Strategy::Bound, 200, 0, "error", 1.0)];
    assert!(rows_per_statement_chart(&failed, Axis::Columns, "t", LOCAL).is_err());
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::new(dir.path().to_path_buf());
    let err = render_run(&run, &failed, Axis::Columns, LOCAL, false).unwrap_err();
    assert!(
        format!("{err:#}").contains("no chart could be drawn"),
        "{err:#}"
    );
    let err = render_run(&run, &[], Axis::Columns, LOCAL, false).unwrap_err();
    assert!(
        format!("{err:#}").contains("the run has no rows"),
        "{err:#}"
    );
}

#[test]
fn overlapping_points_of_the_target_are_dodged_and_the_baseline_stays() {
    let mut rows = Vec::new();
    for repeat in 0..3 {
        let spread = 1.0 + 0.2 * repeat as f64;
        rows.push(row(Strategy::Bound, 50, repeat, "ok", 100.0 * spread));
        rows.push(row(Strategy::Literal, 50, repeat, "ok", 110.0 * spread));
        let mut baseline = row(Strategy::Bound, 50, repeat, "ok", 100.0 * spread);
        baseline.target = TargetKind::Sqlite;
        rows.push(baseline);
    }
    let chart = time_chart(&rows, Axis::Columns, "t", LOCAL).unwrap();
    let size = (800, 600);
    let xs =
        |chart: &LineChart| -> Vec<f64> { chart.lines.iter().map(|l| l.points[0].x).collect() };
    assert_eq!(xs(&figure(&chart)), [50.0, 50.0, 50.0]);
    let drawn = figure(&chart).dodged(size);
    let [bound, literal, baseline] = xs(&drawn)[..] else {
        panic!("three lines: {drawn:?}")
    };
    assert!(bound < 50.0 && literal > 50.0, "{bound} {literal}");
    assert_eq!(baseline, 50.0);
    // Apart by the dodge's width on the plot.
    let pixels = |x: f64| fraction(x, chart.x_range, chart.x_scale) * 800.0;
    let apart = pixels(literal) - pixels(bound);
    assert!((apart - f64::from(px(DODGE_PT))).abs() < 0.01, "{apart}");
    // Lines far apart in y are not moved.
    let far: Vec<_> = rows
        .iter()
        .cloned()
        .map(|mut r| {
            if r.strategy == Strategy::Literal {
                r.outside_ms *= 100.0;
            }
            r
        })
        .collect();
    let chart = time_chart(&far, Axis::Columns, "t", LOCAL).unwrap();
    assert_eq!(xs(&figure(&chart).dodged(size)), [50.0, 50.0, 50.0]);
}

#[test]
fn the_time_caption_says_how_many_rows_each_strategy_wrote() {
    let written = |counts: &[(Strategy, usize)]| {
        let rows: Vec<ProbeRow> = counts
            .iter()
            .map(|&(strategy, rows)| ProbeRow {
                rows,
                ..row(strategy, 4, 0, "ok", 10.0)
            })
            .collect();
        time_chart(&rows, Axis::Columns, "t", LOCAL)
            .unwrap()
            .caption
    };
    let column_sweep = written(&[
        (Strategy::PerRow, 200),
        (Strategy::Bound, 10_000),
        (Strategy::Literal, 10_000),
    ]);
    assert!(
        column_sweep.ends_with(
            ". Each probe writes 10,000 rows (bound, literal) or 200 rows (per-row); its \
             time is scaled to 1,000 rows."
        ),
        "{column_sweep}"
    );
    let one_count = written(&[(Strategy::Bound, 500), (Strategy::Literal, 500)]);
    assert!(
        one_count.ends_with(". Each probe writes 500 rows; its time is scaled to 1,000 rows."),
        "{one_count}"
    );
    let row_sizes = written(&[(Strategy::Bound, 50), (Strategy::Bound, 5000)]);
    assert!(
        row_sizes.contains("Each probe writes 5,000 or 50 rows;"),
        "{row_sizes}"
    );
}

#[test]
fn overhead_is_on_a_linear_axis_with_its_zero_and_negative_values() {
    let mut rows = Vec::new();
    for (columns, overhead) in [(1, -3.0), (2, 0.0), (4, 0.5), (8, 400.0)] {
        let mut r = row(Strategy::Bound, columns, 0, "ok", 10.0);
        r.overhead_ms = Some(overhead);
        rows.push(r);
    }
    let chart = overhead_chart(&rows, Axis::Columns, "t", LOCAL).unwrap();
    let medians: Vec<_> = chart.series[0].points.iter().map(|p| p.median).collect();
    assert_eq!(medians, [-3.0, 0.0, 0.5, 400.0], "no value dropped");
    assert_eq!(
        chart.y_scale,
        Scale::Linear,
        "a span of 133 is still additive"
    );
    let (lo, hi) = chart.y_range;
    assert!(lo < -3.0 && hi > 400.0, "{lo}..{hi}");
}

#[test]
fn times_are_on_a_log_axis_only_when_they_span_more_than_a_factor_of_20() {
    let times = |bound_ms: f64| {
        time_chart(
            &[
                row(Strategy::Literal, 4, 0, "ok", 10.0),
                row(Strategy::Bound, 4, 0, "ok", bound_ms),
            ],
            Axis::Columns,
            "t",
            LOCAL,
        )
        .unwrap()
    };
    let narrow = times(150.0);
    assert_eq!(narrow.y_scale, Scale::Linear);
    assert_eq!(narrow.y_range.0, 0.0, "a linear time axis starts at 0");
    assert_eq!(times(250.0).y_scale, Scale::Log);
}

#[test]
fn the_overhead_chart_is_skipped_with_a_reason_when_the_target_has_one_clock() {
    let mut rows = vec![row(Strategy::Bound, 8, 0, "ok", 10.0)];
    rows[0].target = TargetKind::Sqlite;
    rows[0].inside_ms = 10.0;
    rows[0].overhead_ms = Some(0.0);
    let skip = overhead_chart(&rows, Axis::Columns, "t", TargetKind::Sqlite).unwrap_err();
    assert!(
        skip.reason
            .contains("outside clock is its preparation and writes"),
        "{skip}"
    );
    let local = vec![row(Strategy::Bound, 8, 0, "ok", 10.0)];
    let chart = overhead_chart(&local, Axis::Columns, "t", LOCAL).unwrap();
    assert_eq!(chart.series[0].points[0].median, 5.0);
    assert_eq!(chart.name, "overhead-outside-minus-inside-ms-vs-columns");
}

#[test]
fn the_floor_reference_is_drawn_for_columns_only() {
    let rows = vec![
        row(Strategy::Bound, 1, 0, "ok", 10.0),
        row(Strategy::Bound, 200, 0, "refused", 1.0),
    ];
    let chart = rows_per_statement_chart(&rows, Axis::Columns, "t", LOCAL).unwrap();
    let (curve, label) = chart.reference.unwrap();
    assert_eq!(label, "floor(100 / C)");
    assert_eq!(curve.first(), Some(&(1.0, 100.0)));
    assert_eq!(curve.last(), Some(&(100.0, 1.0)));
    assert_eq!(curve[2], (3.0, 33.0));
    let chart = rows_per_statement_chart(&rows, Axis::RowBytes, "t", LOCAL).unwrap();
    assert!(chart.reference.is_none());
}

/// A PNG file's size in pixels and its resolution in dots per inch, read back by the
/// `png` crate's decoder.
fn png_size_and_dpi(bytes: &[u8]) -> ((u32, u32), Option<(f64, f64)>) {
    let reader = png::Decoder::new(bytes).read_info().unwrap();
    let info = reader.info();
    let dpi = info.pixel_dims.map(|d| {
        assert_eq!(d.unit, png::Unit::Meter);
        let dpi = |per_metre: u32| f64::from(per_metre) * 0.0254;
        (dpi(d.xppu), dpi(d.yppu))
    });
    (info.size(), dpi)
}

/// A small run over both axes: each strategy, repeats, a wall of refusals, and the bare
/// SQLite baseline of bound and literal.
fn synthetic_run(axis: Axis) -> Vec<ProbeRow> {
    let xs: &[usize] = match axis {
        Axis::Columns => &[1, 2, 4, 8, 16, 32, 64, 128, 256],
        _ => &[4, 6, 8, 10, 12],
    };
    let mut rows = Vec::new();
    for &x in xs {
        for repeat in 0..3 {
            let jitter = 1.0 + 0.1 * repeat as f64;
            for strategy in [Strategy::Bound, Strategy::Literal, Strategy::PerRow] {
                let (outcome, ms) = match strategy {
                    Strategy::Bound if x > 100 => ("refused", 1.0),
                    Strategy::Bound => ("ok", 40.0 + x as f64 * 2.0),
                    Strategy::Literal if x > 200 => ("refused", 1.0),
                    Strategy::Literal => ("ok", 15.0 + x as f64),
                    Strategy::PerRow => ("ok", 2000.0 + x as f64 * 10.0),
                    Strategy::Json | Strategy::BatchedRows | Strategy::Exec | Strategy::Copy => {
                        unreachable!("the sweep chart's test draws the three first strategies")
                    }
                };
                let mut r = row(strategy, x, repeat, outcome, ms * jitter);
                if axis == Axis::RowBytes {
                    r.columns = 4;
                    r.row_bytes = x * 100;
                }
                if strategy != Strategy::PerRow {
                    let mut baseline = r.clone();
                    baseline.target = TargetKind::Sqlite;
                    baseline.outside_ms /= 20.0;
                    baseline.inside_ms = baseline.outside_ms;
                    baseline.overhead_ms = Some(0.0);
                    baseline.d1_ms = None;
                    rows.push(baseline);
                }
                rows.push(r);
            }
        }
    }
    rows
}

/// The text of every `<text>` element of an SVG.
fn svg_texts(svg: &str) -> Vec<&str> {
    svg.split("<text")
        .skip(1)
        .filter_map(|element| {
            let (_, rest) = element.split_once('>')?;
            Some(rest.split_once("</text>")?.0.trim())
        })
        .collect()
}

#[test]
fn render_writes_png_svg_and_pdf_of_every_chart_for_both_axes() {
    let dir = tempfile::tempdir().unwrap();
    for axis in [Axis::Columns, Axis::RowBytes] {
        let run = RunDir::new(dir.path().join(axis.name()));
        std::fs::create_dir_all(&run.path).unwrap();
        // Titles on the column sweep's charts only: drawn when asked for, captioned always.
        let titles = axis == Axis::Columns;
        let rows = synthetic_run(axis);
        let drawn = render_run(&run, &rows, axis, LOCAL, titles).unwrap();
        let names: Vec<_> = drawn.iter().map(|d| d.name.clone()).collect();
        assert_eq!(
            names,
            [
                "time-per-1000-rows-vs",
                "rows-per-statement-vs",
                "overhead-outside-minus-inside-ms-vs"
            ]
            .map(|chart| format!("{chart}-{}", axis.name()))
        );
        let place = measured_on(LOCAL);
        let charts = [
            time_chart(&rows, axis, place, LOCAL),
            rows_per_statement_chart(&rows, axis, place, LOCAL),
            overhead_chart(&rows, axis, place, LOCAL),
        ];
        for (drawn, chart) in drawn.iter().zip(charts) {
            let chart = Chart {
                draw_title: titles,
                ..chart.unwrap()
            };
            assert!(drawn.caption.ends_with('.'), "{}", drawn.caption);
            assert!(
                drawn.caption.starts_with(&format!("{}. ", chart.title)),
                "{}",
                drawn.caption
            );
            assert_eq!(
                drawn.files,
                ["png", "svg", "pdf"].map(|ext| run.chart(&drawn.name, ext))
            );
            let png = std::fs::read(&drawn.files[0]).unwrap();
            let (size, dpi) = png_size_and_dpi(&png);
            // A paper column: 3.5 in × 2.6 in at 300 dpi (11,811 pixels per metre).
            assert_eq!(size, (1050, 780), "{}", drawn.name);
            let (x, y) = dpi.unwrap_or_else(|| panic!("no pHYs in {}", drawn.name));
            assert!(
                (x - 300.0).abs() < 0.01 && (y - 300.0).abs() < 0.01,
                "{x} × {y} dpi"
            );
            // The SVG, its text as outlines, and the PDF, with its font.
            let svg = std::fs::read_to_string(&drawn.files[1]).unwrap();
            assert!(svg.starts_with("<svg viewBox=") && !svg.contains("<text"));
            let pdf = std::fs::read(&drawn.files[2]).unwrap();
            assert!(pdf.starts_with(b"%PDF-"), "{}", drawn.name);
            assert!(String::from_utf8_lossy(&pdf).contains("/FontFile2"));

            // What the chart says, in the drawing every file is made of.
            let svg = drawn_svg(&figure(&chart)).unwrap();
            let texts = svg_texts(&svg);
            let name = &drawn.name;
            assert_eq!(texts.contains(&chart.title.as_str()), titles, "{name}");
            for label in [
                "bound (n=3)",
                "literal (n=3)",
                "per-row (n=3)",
                axis.label(),
            ] {
                assert!(texts.contains(&label), "{label} not in {name}: {texts:?}");
            }
            let is_time = name.contains("time-per-1000-rows");
            assert_eq!(
                ["bare SQLite (n=3):", "bound", "literal"]
                    .iter()
                    .all(|entry| texts.contains(entry)),
                is_time,
                "the baseline belongs on the time chart only: {name}"
            );
            // Only the column sweep has refusals (bound above 100 columns); the overhead
            // chart leaves them to the time chart.
            let refused = texts.contains(&"refused");
            let overhead = name.contains("overhead");
            assert_eq!(refused, axis == Axis::Columns && !overhead, "{name}");
            assert!(!texts.contains(&""), "empty text in {name}");
        }
    }
}
