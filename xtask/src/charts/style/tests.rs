//! Tests of the chart style: scales and ticks, titles, text metrics, and the files written.

use super::*;
use anyhow::Result;
use plotters::coord::Shift;

#[test]
fn an_axis_is_logarithmic_only_beyond_a_factor_of_20() {
    assert_eq!(scale_for([1.0, 2.0, 4.0, 8.0, 16.0]), Scale::Linear);
    assert_eq!(scale_for([5.0, 100.0]), Scale::Linear);
    assert_eq!(scale_for([5.0, 101.0]), Scale::Log);
    assert_eq!(scale_for([1.0, 10.0, 100.0, 1000.0]), Scale::Log);
    assert_eq!(
        scale_for([0.0, 1000.0]),
        Scale::Linear,
        "0 has no logarithm"
    );
    assert_eq!(scale_for([]), Scale::Linear);
}

#[test]
fn tick_labels_are_exact_and_grouped_by_thousands() {
    assert_eq!(
        tick_labels(&[0.1, 0.3, 1.0, 10.0, 1000.0, 1e6], Scale::Log),
        ["0.1", "0.3", "1", "10", "1,000", "1,000,000"]
    );
    assert_eq!(
        tick_labels(&[0.5, 1.0, 1.5], Scale::Linear),
        ["0.5", "1.0", "1.5"]
    );
    assert_eq!(format_number(-1234.5, 1), "-1,234.5");
}

#[test]
fn log_ticks_prefer_decades_and_fall_back_to_finer_steps() {
    let fits = |_: &[f64]| true;
    assert_eq!(
        ticks(0.8, 1200.0, Scale::Log, fits).major,
        [1.0, 10.0, 100.0, 1000.0]
    );
    assert_eq!(
        ticks(4.0, 60.0, Scale::Log, fits).major,
        [5.0, 10.0, 20.0, 50.0]
    );
    assert_eq!(ticks(3.0, 5.5, Scale::Log, fits).major, [3.0, 4.0, 5.0]);
    // Too crowded: every other decade.
    let at_most_4 = |t: &[f64]| t.len() <= 4;
    assert_eq!(
        ticks(1.0, 1e6, Scale::Log, at_most_4).major,
        [1.0, 100.0, 1e4, 1e6]
    );
    assert_eq!(
        ticks(0.6, 8.4, Scale::Linear, fits).major,
        [2.0, 4.0, 6.0, 8.0]
    );
}

#[test]
fn text_widths_agree_with_plotters_own_layout() {
    let pen = Pen {
        format: Format::Png,
        fonts: fonts().unwrap(),
    };
    for font in [TICK_LABEL_FONT, TITLE_FONT] {
        for text in [
            "ms per 1,000 rows (outside clock)",
            "10,000",
            "per-row",
            "AVATAR",
        ] {
            let (plotters, _) = pen.style(font, TEXT).font.box_size(text).unwrap();
            let ours = pen.width(text, font);
            assert!(
                (f64::from(plotters) - ours).abs() <= 2.0,
                "{text:?} at {font:?}: plotters {plotters}, ours {ours}"
            );
        }
    }
}

#[test]
fn text_widths_are_positive_grow_with_the_text_and_kern() {
    let pen = Pen {
        format: Format::Svg,
        fonts: fonts().unwrap(),
    };
    let widths: Vec<f64> = (1..=12)
        .map(|n| pen.width(&"rows ".repeat(n), TICK_LABEL_FONT))
        .collect();
    assert!(
        widths[0] > 0.0 && widths.windows(2).all(|w| w[1] > w[0]),
        "{widths:?}"
    );
    assert!(pen.width("M", TITLE_FONT) > pen.width("M", TICK_LABEL_FONT));
    // DejaVu kerns "AV" tighter than its two letters' advances.
    let (a, v) = (pen.width("A", TITLE_FONT), pen.width("V", TITLE_FONT));
    assert!(pen.width("AV", TITLE_FONT) < a + v);
    // A character outside the font still takes room (the missing-glyph box).
    assert!(pen.width("\u{10FFFF}", TICK_LABEL_FONT) > 0.0);
    // DejaVu Sans: cap height 0.729 em, descent 0.236 em.
    assert!(
        (pen.fonts.cap_height - 0.729).abs() < 0.001,
        "{}",
        pen.fonts.cap_height
    );
    assert!(
        (pen.fonts.descent - 0.236).abs() < 0.001,
        "{}",
        pen.fonts.descent
    );
}

#[test]
fn a_legend_heading_starts_a_row_and_its_entries_follow_it() {
    let pen = Pen {
        format: Format::Svg,
        fonts: fonts().unwrap(),
    };
    let line = |shape| Sample::Line {
        color: TEXT,
        points: LINE_PT,
        dashed: false,
        marker: Some(shape),
        small_marker: false,
    };
    let items = vec![
        (line(Shape::Circle), "bound".to_owned()),
        (Sample::Heading, "bare SQLite:".to_owned()),
        (line(Shape::Circle), "bound".to_owned()),
        (line(Shape::Square), "literal".to_owned()),
    ];
    let legend = Legend::layout(&pen, items, 1000);
    let rows: Vec<Vec<&str>> = legend
        .rows
        .iter()
        .map(|row| row.iter().map(|(_, label, _)| label.as_str()).collect())
        .collect();
    assert_eq!(
        rows,
        [vec!["bound"], vec!["bare SQLite:", "bound", "literal"]]
    );
    // A heading has no sample before its label.
    let heading = &legend.rows[1][0];
    assert_eq!(
        heading.2,
        pen.width("bare SQLite:", LEGEND_FONT).ceil() as i32
    );
}

#[test]
fn long_titles_shrink_then_end_in_an_ellipsis() {
    let pen = Pen {
        format: Format::Svg,
        fonts: fonts().unwrap(),
    };
    let (text, font) = fitted_title(&pen, "short", 900.0);
    assert_eq!((text.as_str(), font), ("short", TITLE_FONT));
    let long = "word ".repeat(60);
    let (text, font) = fitted_title(&pen, &long, 900.0);
    assert_eq!(font.points, TITLE_MIN_PT);
    assert!(
        text.ends_with("word…") && pen.width(&text, font) <= 900.0,
        "{text}"
    );
    assert_eq!(fitted_title(&pen, "x", 1.0).0, "…");
}

/// A chart of one line under a legend of two entries, with a band, in the style every
/// chart uses.
struct Sketch;

impl Figure for Sketch {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, pen: &Pen) -> Result<()> {
        let legend = vec![
            (REFERENCE_SAMPLE, "reference".to_owned()),
            (
                Sample::Marker {
                    color: strategy_color(Strategy::Bound),
                    shape: Shape::Circle,
                },
                "found".to_owned(),
            ),
        ];
        let axes = Axes {
            x_label: "columns",
            y_label: "rows",
            x_scale: Scale::Linear,
            x_range: (0.0, 10.0),
            x_text: Default::default(),
            y_scale: Scale::Log,
            y_range: (1.0, 1000.0),
            y_labelled: (1.0, 100.0),
            band: Some((100.0, 1000.0)),
        };
        draw_frame(root, pen, Some("sketch: style"), legend, &axes, |plot| {
            plot.draw_series(LineSeries::new(
                [(1.0, 1.0), (9.0, 90.0)],
                stroke(TEXT, LINE_PT),
            ))
            .map_err(drawing_error)?;
            Ok(())
        })
    }
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
fn a_chart_is_written_as_a_300_dpi_png_an_outlined_svg_and_a_pdf() {
    let dir = tempfile::tempdir().unwrap();
    let path = |ext: &str| dir.path().join(format!("sketch.{ext}"));
    let files = write(&Sketch, path).unwrap();
    assert_eq!(files, [path("png"), path("svg"), path("pdf")]);
    let png = std::fs::read(&files[0]).unwrap();
    let reader = png::Decoder::new(png.as_slice()).read_info().unwrap();
    let info = reader.info();
    assert_eq!(info.size(), FIGURE);
    assert_eq!(info.color_type, png::ColorType::Rgb);
    let dims = info.pixel_dims.expect("a pHYs chunk");
    assert_eq!(dims.unit, png::Unit::Meter);
    // 11,811 pixels per metre: 300 dpi, to the nearest pixel per metre.
    for per_metre in [dims.xppu, dims.yppu] {
        assert!(
            (f64::from(per_metre) * 0.0254 - DPI).abs() < 0.01,
            "{per_metre}"
        );
    }

    // What the chart says: the drawing every file is made from.
    let drawn = drawn_svg(&Sketch).unwrap();
    let texts = svg_texts(&drawn);
    for text in [
        "sketch: style",
        "reference",
        "found",
        "columns",
        "rows",
        "1",
        "100",
    ] {
        assert!(texts.contains(&text), "{text} not in {texts:?}");
    }
    assert!(
        !texts.contains(&"1,000"),
        "the band is not labelled: {texts:?}"
    );
    // Every text names the one font usvg and svg2pdf are given.
    let families: Vec<&str> = drawn
        .split(r#"font-family=""#)
        .skip(1)
        .map(|rest| rest.split_once('"').unwrap().0)
        .collect();
    assert_eq!(families.len(), texts.len());
    assert!(families.iter().all(|f| *f == FONT), "{families:?}");

    // The SVG file: the same size, scalable, its text as outlines and no font inside.
    let svg = std::fs::read_to_string(&files[1]).unwrap();
    assert!(
        svg.starts_with(r#"<svg viewBox="0 0 1050 780" width="1050" height="780""#),
        "{}",
        &svg[..80]
    );
    assert!(!svg.contains("<text") && !svg.contains("font"), "{svg}");
    let outlines = svg.matches("<path").count();
    assert!(
        outlines > drawn.matches("<path").count() + texts.len(),
        "{outlines}"
    );
    assert!(svg.len() < 100_000, "{} bytes", svg.len());
}

#[test]
fn the_pdf_is_one_page_of_the_printed_size_with_dejavu_sans_embedded() {
    let dir = tempfile::tempdir().unwrap();
    let files = write(&Sketch, |ext| dir.path().join(format!("sketch.{ext}"))).unwrap();
    let pdf = std::fs::read(&files[2]).unwrap();
    assert!(pdf.starts_with(b"%PDF-"), "{:?}", &pdf[..8]);
    let text = String::from_utf8_lossy(&pdf);
    assert!(
        text.contains("/Type /Pages") && text.contains("/Count 1"),
        "one page"
    );
    // 3.5 in × 2.6 in in points, like the PNG at 300 dpi.
    assert!(
        text.contains("/MediaBox [0 0 252 187.2]"),
        "no page of 252 × 187.2 pt"
    );
    // The font's file inside, subset (`ABCDEF+`), regular and the title's bold.
    assert_eq!(text.matches("/FontFile2").count(), 2);
    for name in ["DejaVuSans", "DejaVuSans-Bold"] {
        let subset = text.split("/BaseFont /").skip(1).any(|rest| {
            let (tag, font) = rest.split_once('+').unwrap_or_default();
            tag.len() == 6 && font.split(['/', ' ', '\n', '>']).next() == Some(name)
        });
        assert!(subset, "no {name} subset embedded");
    }
}

#[test]
fn percentile_ticks_name_the_percentile_their_value_stands_for() {
    assert_eq!(
        TickText::Percentile.labels(&[2.0, 10.0, 100.0, 1000.0, 20.0], Scale::Log),
        ["p50", "p90", "p99", "p99.9", "p95"]
    );
    assert_eq!(
        TickText::Number.labels(&[2.0, 10.0], Scale::Log),
        tick_labels(&[2.0, 10.0], Scale::Log)
    );
}
