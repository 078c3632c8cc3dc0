//! The one style every d1bench chart is drawn in: a paper column's figure (3.5 in × 2.6 in at
//! 300 dpi) with DejaVu Sans at fixed point sizes and the same line widths, colours and margins;
//! the title, legend and axes every chart shares; and each chart's two files, a PNG that records
//! its print resolution and an SVG that carries its font.
//!
//! A chart module decides what its chart shows and draws its data; [`draw_frame`] draws
//! everything around the data (title, legend above the plot, axes, ticks, grid, axis labels) and
//! [`write`] writes the files. Text is laid out by [`Pen`] from the embedded font's own metrics,
//! so both formats place it identically on every machine.

use std::fmt;
use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::sync::OnceLock;

use ab_glyph::{Font as _, FontRef, PxScale, PxScaleFont, ScaleFont};
use anyhow::{Context, Result, anyhow};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use d1bench_core::Strategy;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

// ---------------------------------------------------------------------------------------------
// Style: the one place that decides how every chart looks.
// ---------------------------------------------------------------------------------------------

/// Resolution of the PNG files, also written into them (`pHYs`) so that LaTeX and word
/// processors place them at their printed size.
pub const DPI: f64 = 300.0;

/// Figure size in pixels: 3.5 in × 2.6 in (one paper column) at [`DPI`]. The SVG files have the
/// same logical size, so both formats lay out identically.
pub const FIGURE: (u32, u32) = (1050, 780);

/// The family the embedded DejaVu Sans is registered under with plotters, and the one SVG text
/// names: each SVG carries the font itself ([`embed_fonts`]), so no system font is looked up.
const FONT: &str = "DejaVu Sans";

/// A size and weight of text; sizes in points as printed at 3.5 in wide.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Font {
    points: f64,
    bold: bool,
}

const TITLE_FONT: Font = Font {
    points: 8.0,
    bold: true,
};
const AXIS_LABEL_FONT: Font = Font {
    points: 7.5,
    bold: false,
};
const TICK_LABEL_FONT: Font = Font {
    points: 7.0,
    bold: false,
};
const LEGEND_FONT: Font = Font {
    points: 7.0,
    bold: false,
};
/// The smallest a title may shrink to before it is shortened.
const TITLE_MIN_PT: f64 = 6.0;

/// Line widths and marker sizes in points.
pub const LINE_PT: f64 = 1.0;
pub const THIN_PT: f64 = 0.6;
const GRID_PT: f64 = 0.4;
const MARKER_PT: f64 = 2.1;
const CROSS_PT: f64 = 2.0;
/// Half the width of an error bar's caps.
pub const CAP_PT: f64 = 1.6;
const TICK_PT: f64 = 2.5;
/// Dashes and the gaps between them.
pub const DASH_PT: (f64, f64) = (2.5, 1.5);

/// Space around the figure and between its parts, in points.
const MARGIN_PT: f64 = 4.0;
const GAP_PT: f64 = 3.0;
/// Between a tick mark's end and its label.
const TICK_GAP_PT: f64 = 1.5;
/// Legend: the sample line, sample to label, item to item.
const LEGEND_SAMPLE_PT: f64 = 11.0;
const LEGEND_INNER_PT: f64 = 2.5;
const LEGEND_ITEM_PT: f64 = 7.0;

/// Share of an axis left empty beyond the data on each side (of the log span on log axes).
const PAD: f64 = 0.05;

/// The x axis becomes logarithmic when its values span more than this factor.
const LOG_X_ABOVE: f64 = 20.0;

const TEXT: RGBColor = RGBColor(0x20, 0x20, 0x20);
const AXIS_LINE: RGBColor = RGBColor(0x40, 0x40, 0x40);
const GRID: RGBColor = RGBColor(0xdc, 0xdc, 0xdc);
const GRID_MINOR: RGBColor = RGBColor(0xef, 0xef, 0xef);
const BAND: RGBColor = RGBColor(0xf2, 0xf2, 0xf2);
/// Marks that belong to no line (a refusal).
pub const MUTED: RGBColor = RGBColor(0x60, 0x60, 0x60);
/// A reference curve drawn for comparison (a documented limit), dashed and thin.
const REFERENCE: RGBColor = RGBColor(0x8c, 0x8c, 0x8c);
/// The bare SQLite baseline's lines: grey, apart from every strategy's colour.
pub const BASELINE: RGBColor = RGBColor(0x9a, 0x9a, 0x9a);

/// Each strategy's colour (Okabe–Ito, readable with colour-vision deficiencies), the same in
/// every chart.
pub fn strategy_color(strategy: Strategy) -> RGBColor {
    match strategy {
        Strategy::Bound => RGBColor(0x00, 0x72, 0xb2),
        Strategy::Literal => RGBColor(0xd5, 0x5e, 0x00),
        Strategy::PerRow => RGBColor(0x00, 0x9e, 0x73),
    }
}

/// Each strategy's marker, so the lines stay apart in greyscale print too.
pub fn strategy_shape(strategy: Strategy) -> Shape {
    match strategy {
        Strategy::Bound => Shape::Circle,
        Strategy::Literal => Shape::Square,
        Strategy::PerRow => Shape::Triangle,
    }
}

/// Points to pixels at [`DPI`].
pub fn px(points: f64) -> i32 {
    (points * DPI / 72.0).round() as i32
}

/// A line of `points` width.
pub fn stroke(color: RGBColor, points: f64) -> ShapeStyle {
    color.stroke_width(px(points).max(1) as u32)
}

// ---------------------------------------------------------------------------------------------
// Files.
// ---------------------------------------------------------------------------------------------

/// A file format every chart is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Png,
    Svg,
}

impl Format {
    fn extension(self) -> &'static str {
        match self {
            Format::Png => "png",
            Format::Svg => "svg",
        }
    }
}

/// A chart that can draw itself on any plotters backend, its text set with `pen`.
pub trait Figure {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>, pen: &Pen) -> Result<()>;
}

/// Writes `figure` as PNG and as SVG, each to the path `path` gives for its extension; returns
/// the paths written.
pub fn write(figure: &impl Figure, path: impl Fn(&str) -> PathBuf) -> Result<Vec<PathBuf>> {
    let fonts = fonts()?;
    [Format::Png, Format::Svg]
        .into_iter()
        .map(|format| {
            let path = path(format.extension());
            let pen = Pen { format, fonts };
            let bytes =
                render(figure, &pen).with_context(|| format!("cannot draw {}", path.display()))?;
            std::fs::write(&path, bytes)
                .with_context(|| format!("cannot write {}", path.display()))?;
            Ok(path)
        })
        .collect()
}

/// The bytes of `figure`'s file in `pen`'s format.
fn render(figure: &impl Figure, pen: &Pen) -> Result<Vec<u8>> {
    match pen.format {
        Format::Png => {
            let (width, height) = FIGURE;
            let mut rgb = vec![0; width as usize * height as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut rgb, FIGURE).into_drawing_area();
                figure.draw(&root, pen)?;
                root.present().map_err(drawing_error)?;
            }
            encode_png(&rgb, FIGURE, DPI)
        }
        Format::Svg => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, FIGURE).into_drawing_area();
                figure.draw(&root, pen)?;
                root.present().map_err(drawing_error)?;
            }
            Ok(embed_fonts(&svg)?.into_bytes())
        }
    }
}

/// `svg` with the faces of [`FONT`] it uses embedded, as `@font-face` rules in a `<style>` right
/// after its opening tag, so every viewer sets its text in DejaVu Sans as the PNG is, instead of
/// whatever font it has. plotters' SVG backend only names a family, and no crate adds fonts to
/// an SVG, hence this.
fn embed_fonts(svg: &str) -> Result<String> {
    let open = svg
        .find("<svg")
        .and_then(|start| Some(start + svg[start..].find('>')? + 1))
        .context("plotters wrote an SVG without an <svg> tag")?;
    let mut faces = vec![("normal", dejavu::sans::regular())];
    if svg.contains(r#"font-weight="bold""#) {
        faces.push(("bold", dejavu::sans::bold()));
    }
    let mut style = String::from("\n<defs><style>");
    for (weight, font) in faces {
        style.push_str(&format!(
            "@font-face{{font-family:\"{FONT}\";font-weight:{weight};\
             src:url(data:font/ttf;base64,{}) format(\"truetype\");}}",
            BASE64.encode(font)
        ));
    }
    style.push_str("</style></defs>");
    Ok(format!("{}{style}{}", &svg[..open], &svg[open..]))
}

/// plotters' errors carry the backend's error type, which anyhow cannot always hold.
pub fn drawing_error(error: impl fmt::Display) -> anyhow::Error {
    anyhow!("drawing failed: {error}")
}

/// `rgb` (8-bit RGB, rows top to bottom) as a PNG of `size` pixels, its resolution `dpi`
/// recorded (`pHYs`) so that LaTeX and word processors place it at its printed size.
fn encode_png(rgb: &[u8], (width, height): (u32, u32), dpi: f64) -> Result<Vec<u8>> {
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    // Paeth predicts flat colour and antialiased edges best, and the encoder's default level
    // (its own default is its fastest): these charts come out at half of what the png crate's
    // defaults or plotters' encoder wrote.
    encoder.set_filter(png::FilterType::Paeth);
    encoder.set_compression(png::Compression::Default);
    let per_metre = (dpi / 0.0254).round() as u32;
    encoder.set_pixel_dims(Some(png::PixelDimensions {
        xppu: per_metre,
        yppu: per_metre,
        unit: png::Unit::Meter,
    }));
    let mut writer = encoder.write_header().context("cannot encode the PNG")?;
    writer
        .write_image_data(rgb)
        .context("cannot encode the PNG")?;
    writer.finish().context("cannot encode the PNG")?;
    Ok(png)
}

// ---------------------------------------------------------------------------------------------
// Text.
// ---------------------------------------------------------------------------------------------

/// The embedded fonts, registered with plotters and read by ab_glyph for laying text out.
struct Fonts {
    regular: FontRef<'static>,
    bold: FontRef<'static>,
    /// Font units per em (2048 for DejaVu Sans).
    units_per_em: f32,
    /// The cap height (top of "H") and descent, in em: where a centred or bottom-anchored
    /// text's baseline goes.
    cap_height: f64,
    descent: f64,
}

/// Registers DejaVu Sans (regular and bold) with plotters once per process and reads its metrics.
fn fonts() -> Result<&'static Fonts> {
    static FONTS: OnceLock<Option<Fonts>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let (regular, bold) = (dejavu::sans::regular(), dejavu::sans::bold());
            plotters::style::register_font(FONT, FontStyle::Normal, regular).ok()?;
            plotters::style::register_font(FONT, FontStyle::Bold, bold).ok()?;
            let regular = FontRef::try_from_slice(regular).ok()?;
            let units_per_em = regular.units_per_em()?;
            // Outline bounds are in font units, y up: `min.y` is the top of the glyph.
            let cap = regular.outline(regular.glyph_id('H'))?.bounds.min.y;
            Some(Fonts {
                cap_height: f64::from(cap / units_per_em),
                descent: f64::from(-regular.descent_unscaled() / units_per_em),
                regular,
                bold: FontRef::try_from_slice(bold).ok()?,
                units_per_em,
            })
        })
        .as_ref()
        .context("the embedded DejaVu Sans font could not be loaded")
}

impl Fonts {
    /// Where a text's baseline sits below its anchor, in em, for each vertical anchor.
    fn baseline(&self, v: VPos) -> f64 {
        match v {
            // plotters' SVG text: `dy="0.76em"` below a top anchor; the PNG follows it.
            VPos::Top => 0.76,
            VPos::Center => self.cap_height / 2.0,
            VPos::Bottom => -self.descent,
        }
    }
}

/// Which way text runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Right,
    /// Bottom to top, as a y axis label.
    Up,
}

/// Measures and draws text identically in both formats.
///
/// plotters' bitmap text (ab_glyph) drops each glyph's left side bearing, which spaces letters
/// unevenly, and sits about 0.2 em higher than its SVG text; no crate lays text out the way
/// plotters' SVG does. So PNG text is placed glyph by glyph from ab_glyph's metrics of the same
/// font. SVG text stays whole (selectable, searchable), placed so its baseline falls where the
/// PNG's does.
pub struct Pen {
    format: Format,
    fonts: &'static Fonts,
}

impl Pen {
    /// The em size of `font` in pixels.
    fn em(font: Font) -> f64 {
        font.points * DPI / 72.0
    }

    /// The face of `font` scaled to its em size. ab_glyph, like plotters' bitmap text, scales
    /// a font by its ascent-to-descent height, not by its em.
    fn scaled(&self, font: Font) -> PxScaleFont<&'static FontRef<'static>> {
        let face = if font.bold {
            &self.fonts.bold
        } else {
            &self.fonts.regular
        };
        let height = Self::em(font) as f32 * face.height_unscaled() / self.fonts.units_per_em;
        face.as_scaled(PxScale::from(height))
    }

    /// Width of `text` in pixels: advances plus kerning.
    fn width(&self, text: &str, font: Font) -> f64 {
        let scaled = self.scaled(font);
        let mut width = 0.0;
        let mut previous = None;
        for c in text.chars() {
            let glyph = scaled.glyph_id(c);
            if let Some(left) = previous.replace(glyph) {
                width += scaled.kern(left, glyph);
            }
            width += scaled.h_advance(glyph);
        }
        f64::from(width)
    }

    /// The plotters text style giving `font` its em size: plotters sizes bitmap text as
    /// ab_glyph does (by the font's height), and writes SVG font sizes as the size / 1.24.
    fn style(&self, font: Font, color: RGBColor) -> TextStyle<'static> {
        let size = match self.format {
            Format::Png => f64::from(self.scaled(font).height()),
            Format::Svg => Self::em(font) * 1.24,
        };
        let weight = if font.bold {
            FontStyle::Bold
        } else {
            FontStyle::Normal
        };
        FontDesc::new(FontFamily::Name(FONT), size, weight).color(&color)
    }

    /// Draws `text` anchored at `at` (pixels of `area`) by `anchor`, running in `direction`.
    #[allow(clippy::too_many_arguments)]
    fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        text: &str,
        font: Font,
        color: RGBColor,
        (h, v): (HPos, VPos),
        direction: Direction,
        at: (i32, i32),
    ) -> Result<()> {
        let em = Self::em(font);
        // Unit vectors along the text and down across it, and plotters' matching rotation.
        let ((ax, ay), (bx, by), transform) = match direction {
            Direction::Right => ((1.0, 0.0), (0.0, 1.0), FontTransform::None),
            Direction::Up => ((0.0, -1.0), (1.0, 0.0), FontTransform::Rotate270),
        };
        let place = |along: f64, across: f64| {
            (
                (f64::from(at.0) + ax * along + bx * across).round() as i32,
                (f64::from(at.1) + ay * along + by * across).round() as i32,
            )
        };
        let style = self.style(font, color).transform(transform);
        let baseline = self.fonts.baseline(v) * em;
        match self.format {
            Format::Svg => {
                // plotters' SVG puts the baseline 0.76 em below a top anchor.
                let style = style.pos(Pos::new(h, VPos::Top));
                area.draw_text(text, &style, place(0.0, baseline - 0.76 * em))
                    .map_err(drawing_error)
            }
            Format::Png => {
                let scaled = self.scaled(font);
                let width = self.width(text, font);
                let mut pen = match h {
                    HPos::Left => 0.0,
                    HPos::Center => -width / 2.0,
                    HPos::Right => -width,
                };
                // plotters draws a top-anchored glyph's baseline half its size below the anchor.
                let across = baseline - f64::from(scaled.height()) / 2.0;
                let style = style.pos(Pos::new(HPos::Left, VPos::Top));
                let mut buffer = [0; 4];
                let mut previous = None;
                for c in text.chars() {
                    let glyph = scaled.glyph_id(c);
                    if let Some(left) = previous.replace(glyph) {
                        pen += f64::from(scaled.kern(left, glyph));
                    }
                    if !c.is_whitespace() {
                        let bearing = f64::from(scaled.h_side_bearing(glyph));
                        area.draw_text(
                            c.encode_utf8(&mut buffer),
                            &style,
                            place(pen + bearing, across),
                        )
                        .map_err(drawing_error)?;
                    }
                    pen += f64::from(scaled.h_advance(glyph));
                }
                Ok(())
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Axes: scales, ranges, and which values an axis labels, and how.
// ---------------------------------------------------------------------------------------------

/// A range of an axis: `(from, to)`.
pub type Span = (f64, f64);

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    Log,
}

/// The x scale for values `xs`: logarithmic when they span more than [`LOG_X_ABOVE`] (the
/// geometric sweeps), linear otherwise.
pub fn x_scale(xs: impl IntoIterator<Item = f64>) -> Scale {
    let (lo, hi) = extent(xs).unwrap_or((1.0, 1.0));
    if lo > 0.0 && hi / lo > LOG_X_ABOVE {
        Scale::Log
    } else {
        Scale::Linear
    }
}

/// Smallest and largest of `values`, or `None` when there are none.
pub fn extent(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values.into_iter().fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// `lo..=hi` widened by [`PAD`] on each side, so markers at the ends are not cut.
pub fn padded(lo: f64, hi: f64, scale: Scale) -> (f64, f64) {
    match scale {
        Scale::Log => {
            let (lo, hi) = (lo.log10(), hi.log10());
            let pad = if hi > lo { (hi - lo) * PAD } else { 0.3 };
            (10f64.powf(lo - pad), 10f64.powf(hi + pad))
        }
        Scale::Linear => {
            let pad = if hi > lo {
                (hi - lo) * PAD
            } else {
                (lo.abs() * 0.1).max(1.0)
            };
            (lo - pad, hi + pad)
        }
    }
}

/// The x axis for values from `lo` to `hi`: padded, and from 0 on a linear axis when the
/// values start near it, so the axis reads from its natural origin.
pub fn x_range(lo: f64, hi: f64, scale: Scale) -> (f64, f64) {
    let (padded_lo, padded_hi) = padded(lo, hi, scale);
    if scale == Scale::Linear && lo > 0.0 && lo <= hi * 0.25 {
        (0.0, padded_hi)
    } else {
        (padded_lo, padded_hi)
    }
}

/// `v` as a tick label with `decimals` digits after the point and thousands separated by commas.
fn format_number(v: f64, decimals: usize) -> String {
    let text = format!("{:.*}", decimals, v.abs());
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let mut grouped = String::new();
    for (i, digit) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    let sign = if v < 0.0 && text.bytes().any(|b| b.is_ascii_digit() && b != b'0') {
        "-"
    } else {
        ""
    };
    if frac.is_empty() {
        format!("{sign}{grouped}")
    } else {
        format!("{sign}{grouped}.{frac}")
    }
}

/// The fewest decimals that show `v` exactly (up to float noise).
fn decimals(v: f64) -> usize {
    (0..=9)
        .find(|&d| {
            let scale = 10f64.powi(d as i32);
            ((v * scale).round() / scale - v).abs() <= 1e-9 * v.abs().max(1e-12)
        })
        .unwrap_or(9)
}

/// Labels for `ticks`: each with its own decimals on a log axis (0.1, 1, 10), the same
/// decimals throughout on a linear one (0.5, 1.0, 1.5).
fn tick_labels(ticks: &[f64], scale: Scale) -> Vec<String> {
    let shared = ticks.iter().map(|&t| decimals(t)).max().unwrap_or(0);
    ticks
        .iter()
        .map(|&t| match scale {
            Scale::Log => format_number(t, decimals(t)),
            Scale::Linear => format_number(t, shared),
        })
        .collect()
}

/// `mantissa × 10^exponent`, exact for the decimal ticks (3 × 10⁻¹ is 0.3, not 0.30000000000000004).
fn times_ten_to(mantissa: f64, exponent: i32) -> f64 {
    if exponent >= 0 {
        mantissa * 10f64.powi(exponent)
    } else {
        mantissa / 10f64.powi(-exponent)
    }
}

/// Tick sets for `lo..=hi`, most preferred first.
fn tick_candidates(lo: f64, hi: f64, scale: Scale) -> Vec<Vec<f64>> {
    match scale {
        Scale::Linear => linear_tick_candidates(lo, hi),
        Scale::Log => {
            // Decades, then 1-2-5, then every other (third, fourth) decade for wide ranges.
            let mut candidates = vec![
                log_ticks(lo, hi, &[1.0], 1),
                log_ticks(lo, hi, &[1.0, 2.0, 5.0], 1),
            ];
            candidates.extend((2..=4).map(|stride| log_ticks(lo, hi, &[1.0], stride)));
            // About a decade or less: every 1..9 × 10^k, then evenly spaced values.
            candidates.push(log_ticks(lo, hi, &DIGITS, 1));
            candidates.extend(linear_tick_candidates(lo, hi));
            candidates
        }
    }
}

const DIGITS: [f64; 9] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];

/// The values `m × 10^k` within `lo..=hi` for each of `mantissas`, every `stride`th decade.
fn log_ticks(lo: f64, hi: f64, mantissas: &[f64], stride: i32) -> Vec<f64> {
    let within = |v: &f64| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9);
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    (first..=last)
        .filter(|k| k.rem_euclid(stride) == 0)
        .flat_map(|k| mantissas.iter().map(move |&m| times_ten_to(m, k)))
        .filter(within)
        .collect()
}

/// Evenly spaced ticks at steps of 1, 2 or 5 × 10^k, sparsest first.
fn linear_tick_candidates(lo: f64, hi: f64) -> Vec<Vec<f64>> {
    if hi.is_nan() || lo.is_nan() || hi <= lo {
        return Vec::new();
    }
    let top = (hi - lo).log10().floor() as i32;
    let mut candidates = Vec::new();
    for k in (top - 2..=top).rev() {
        for m in [5.0, 2.0, 1.0] {
            let step = times_ten_to(m, k);
            let (first, last) = ((lo / step).ceil() as i64, (hi / step).floor() as i64);
            if last - first <= 40 {
                candidates.push(
                    (first..=last)
                        .map(|i| times_ten_to(i as f64 * m, k))
                        .collect(),
                );
            }
        }
    }
    candidates
}

/// The first candidate with a count in `preferred` whose labels fit; failing that the first
/// that fits with at least two ticks; failing that the sparsest non-empty one.
fn choose_ticks(
    candidates: Vec<Vec<f64>>,
    preferred: RangeInclusive<usize>,
    fits: impl Fn(&[f64]) -> bool,
) -> Vec<f64> {
    let pick = candidates
        .iter()
        .position(|c| preferred.contains(&c.len()) && fits(c))
        .or_else(|| candidates.iter().position(|c| c.len() >= 2 && fits(c)))
        .or_else(|| {
            (0..candidates.len())
                .filter(|&i| !candidates[i].is_empty())
                .min_by_key(|&i| candidates[i].len())
        });
    pick.map(|i| candidates[i].clone()).unwrap_or_default()
}

/// The ticks of an axis: labelled (bold grid) and unlabelled minor ones (light grid).
#[derive(Debug, Clone, PartialEq)]
struct Ticks {
    major: Vec<f64>,
    minor: Vec<f64>,
}

/// Chooses the ticks for `lo..=hi` whose labels fit, with the log axes' minor grid at the
/// remaining 1..9 × 10^k.
fn ticks(lo: f64, hi: f64, scale: Scale, fits: impl Fn(&[f64]) -> bool) -> Ticks {
    let preferred = match scale {
        Scale::Log => 3..=8,
        Scale::Linear => 4..=8,
    };
    let major = choose_ticks(tick_candidates(lo, hi, scale), preferred, fits);
    let minor = match scale {
        Scale::Log if (hi / lo).log10() <= 6.0 => log_ticks(lo, hi, &DIGITS, 1)
            .into_iter()
            .filter(|v| !major.iter().any(|m| (m - v).abs() <= 1e-9 * v))
            .collect(),
        _ => Vec::new(),
    };
    Ticks { major, minor }
}

/// Where `v` sits along `lo..=hi`, from 0 to 1.
fn fraction(v: f64, (lo, hi): (f64, f64), scale: Scale) -> f64 {
    match scale {
        Scale::Linear => (v - lo) / (hi - lo),
        Scale::Log => (v / lo).ln() / (hi / lo).ln(),
    }
}

/// An axis for plotters with our own scale, range and ticks.
pub struct PlotAxis {
    scale: Scale,
    range: (f64, f64),
    ticks: Ticks,
}

impl Ranged for PlotAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, (from, to): (i32, i32)) -> i32 {
        let at = fraction(*value, self.range, self.scale);
        // Pins what a log axis cannot show (zero, negatives) to its start instead of overflowing.
        let at = if at.is_finite() {
            at.clamp(-1.0, 2.0)
        } else {
            0.0
        };
        from + (at * f64::from(to - from)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.ticks.minor.clone()
        } else {
            self.ticks.major.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.0..self.range.1
    }
}

// ---------------------------------------------------------------------------------------------
// The frame: title, legend and axes around a chart's data.
// ---------------------------------------------------------------------------------------------

/// A marker's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Circle,
    Square,
    Triangle,
    /// A refused point.
    Cross,
}

/// The outline of a `shape` marker centred `offset` pixels from its point, as a polygon so
/// every shape is one element type. All shapes have about the same area, so no strategy looks
/// heavier than another.
pub fn marker(shape: Shape, (dx, dy): (i32, i32)) -> Vec<(i32, i32)> {
    let r = f64::from(px(MARKER_PT));
    let at = |x: f64, y: f64| (dx + x.round() as i32, dy + y.round() as i32);
    let turn = |i: usize, n: usize| i as f64 * std::f64::consts::TAU / n as f64;
    match shape {
        Shape::Circle => (0..32)
            .map(|i| at(r * turn(i, 32).cos(), r * turn(i, 32).sin()))
            .collect(),
        Shape::Square => {
            let s = r * 0.886;
            vec![at(-s, -s), at(s, -s), at(s, s), at(-s, s)]
        }
        Shape::Triangle => {
            // Equilateral, pointing up, centred on its centroid.
            let radius = r * 1.555;
            (0..3)
                .map(|i| {
                    let a = turn(i, 3) - std::f64::consts::FRAC_PI_2;
                    at(radius * a.cos(), radius * a.sin())
                })
                .collect()
        }
        Shape::Cross => {
            // A plus with arms `l` long and `t` half thick, turned 45°.
            let l = f64::from(px(CROSS_PT)) * 1.3;
            let t = f64::from(px(LINE_PT)) / 2.0 + 0.5;
            let plus = [
                (t, l),
                (t, t),
                (l, t),
                (l, -t),
                (t, -t),
                (t, -l),
                (-t, -l),
                (-t, -t),
                (-l, -t),
                (-l, t),
                (-t, t),
                (-t, l),
            ];
            let c = std::f64::consts::FRAC_1_SQRT_2;
            plus.iter()
                .map(|&(x, y)| at(c * (x - y), c * (x + y)))
                .collect()
        }
    }
}

/// The title and its font: shrunk down to [`TITLE_MIN_PT`], then shortened, until it fits.
fn fitted_title(pen: &Pen, title: &str, width: f64) -> (String, Font) {
    let mut font = TITLE_FONT;
    while pen.width(title, font) > width && font.points > TITLE_MIN_PT {
        font.points -= 0.5;
    }
    let mut text = title.to_owned();
    let mut keep = title.chars().count();
    while pen.width(&text, font) > width && keep > 0 {
        keep -= 1;
        let kept: String = title.chars().take(keep).collect();
        text = format!("{}…", kept.trim_end());
    }
    (text, font)
}

/// What a legend entry shows before its label.
#[derive(Debug, Clone, PartialEq)]
pub enum Sample {
    /// A line `points` wide, solid or dashed, with a marker at its middle or none.
    Line {
        color: RGBColor,
        points: f64,
        dashed: bool,
        marker: Option<Shape>,
    },
    /// A marker alone.
    Marker { color: RGBColor, shape: Shape },
}

impl Sample {
    /// Width of the sample drawn before the label: a line, or just the marker.
    fn width(&self) -> i32 {
        match self {
            Sample::Line { .. } => px(LEGEND_SAMPLE_PT),
            Sample::Marker { .. } => px(CROSS_PT * 2.6),
        }
    }

    /// Draws the sample from `x` along a row centred at `cy`.
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        x: i32,
        cy: i32,
    ) -> Result<()> {
        let width = self.width();
        let mid = (x + width / 2, cy);
        let (color, line, shape) = match *self {
            Sample::Line {
                color,
                points,
                dashed,
                marker,
            } => (color, Some((points, dashed)), marker),
            Sample::Marker { color, shape } => (color, None, Some(shape)),
        };
        if let Some((points, dashed)) = line {
            draw_line(
                root,
                vec![(x, cy), (x + width, cy)],
                stroke(color, points),
                dashed,
            )?;
        }
        if let Some(shape) = shape {
            root.draw(
                &(EmptyElement::at(mid) + Polygon::new(marker(shape, (0, 0)), color.filled())),
            )
            .map_err(drawing_error)?;
        }
        Ok(())
    }
}

/// The legend sample of a reference curve: thin, dashed, grey.
pub const REFERENCE_SAMPLE: Sample = Sample::Line {
    color: REFERENCE,
    points: THIN_PT,
    dashed: true,
    marker: None,
};

/// Draws a reference curve (a documented limit, say) through `points` on `plot`, under the data
/// drawn after it.
pub fn draw_reference<DB: DrawingBackend>(
    plot: &mut Plot<'_, DB>,
    points: Vec<(f64, f64)>,
) -> Result<()> {
    let style = stroke(REFERENCE, THIN_PT);
    plot.draw_series([DashedPathElement::new(
        points,
        px(DASH_PT.0),
        px(DASH_PT.1),
        style,
    )])
    .map_err(drawing_error)?;
    Ok(())
}

/// A legend in centred rows above the plot, where it can never cover data.
struct Legend {
    /// Rows of (sample, label, width in pixels).
    rows: Vec<Vec<(Sample, String, i32)>>,
    row_height: i32,
}

impl Legend {
    fn layout(pen: &Pen, items: Vec<(Sample, String)>, width: i32) -> Legend {
        let gap = px(LEGEND_ITEM_PT);
        let mut rows: Vec<Vec<(Sample, String, i32)>> = Vec::new();
        for (sample, label) in items {
            let item_width =
                sample.width() + px(LEGEND_INNER_PT) + pen.width(&label, LEGEND_FONT).ceil() as i32;
            match rows.last_mut() {
                Some(row) if Legend::row_width(row) + gap + item_width <= width => {
                    row.push((sample, label, item_width))
                }
                _ => rows.push(vec![(sample, label, item_width)]),
            }
        }
        Legend {
            rows,
            row_height: (Pen::em(LEGEND_FONT) * 1.4).round() as i32,
        }
    }

    fn row_width(row: &[(Sample, String, i32)]) -> i32 {
        let items: i32 = row.iter().map(|(_, _, w)| w).sum();
        items + px(LEGEND_ITEM_PT) * (row.len() as i32 - 1).max(0)
    }

    fn height(&self) -> i32 {
        self.rows.len() as i32 * self.row_height
    }

    /// Draws the legend with its top at `top`, centred on a figure `width` wide.
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        pen: &Pen,
        width: i32,
        top: i32,
    ) -> Result<()> {
        for (r, row) in self.rows.iter().enumerate() {
            let cy = top + r as i32 * self.row_height + self.row_height / 2;
            let mut x = (width - Legend::row_width(row)) / 2;
            for (sample, label, item_width) in row {
                sample.draw(root, x, cy)?;
                let at = (x + sample.width() + px(LEGEND_INNER_PT), cy);
                let anchor = (HPos::Left, VPos::Center);
                pen.draw(root, label, LEGEND_FONT, TEXT, anchor, Direction::Right, at)?;
                x += item_width + px(LEGEND_ITEM_PT);
            }
        }
        Ok(())
    }
}

/// A polyline in pixels, solid or dashed.
fn draw_line<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    points: Vec<(i32, i32)>,
    style: ShapeStyle,
    dashed: bool,
) -> Result<()> {
    if dashed {
        root.draw(&DashedPathElement::new(
            points,
            px(DASH_PT.0),
            px(DASH_PT.1),
            style,
        ))
    } else {
        root.draw(&PathElement::new(points, style))
    }
    .map_err(drawing_error)
}

/// A chart's two axes.
#[derive(Debug, Clone, PartialEq)]
pub struct Axes<'a> {
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub x_scale: Scale,
    pub x_range: Span,
    pub y_scale: Scale,
    pub y_range: Span,
    /// The part of `y_range` whose values are labelled: all of it, or less when a band above
    /// the data holds marks of no value (refusals).
    pub y_labelled: Span,
    /// A grey band across the plot over this part of the y axis, under the grid.
    pub band: Option<Span>,
}

/// The plot a chart draws its data on, in the values of its axes.
pub type Plot<'a, DB> = ChartContext<'a, DB, Cartesian2d<PlotAxis, PlotAxis>>;

/// Draws everything of a chart but its data on `root`: the title, the legend of `legend` under
/// it, and below them the axes with their ticks, grid and labels. Then `data` draws on the plot,
/// over the grid.
pub fn draw_frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    pen: &Pen,
    title: &str,
    legend: Vec<(Sample, String)>,
    axes: &Axes,
    data: impl FnOnce(&mut Plot<'_, DB>) -> Result<()>,
) -> Result<()> {
    root.fill(&WHITE).map_err(drawing_error)?;
    let (width, _) = root.dim_in_pixel();
    let width = width as i32;
    let margin = px(MARGIN_PT);

    let (title, font) = fitted_title(pen, title, f64::from(width - 2 * margin));
    let anchor = (HPos::Center, VPos::Top);
    let at = (width / 2, margin);
    pen.draw(root, &title, font, TEXT, anchor, Direction::Right, at)?;
    let mut top = margin + px(font.points) + px(GAP_PT);

    let legend = Legend::layout(pen, legend, width - 2 * margin);
    legend.draw(root, pen, width, top)?;
    top += legend.height() + px(GAP_PT);

    let (_, area) = root.split_vertically(top);
    let mut plot = draw_axes(root, &area, pen, axes)?;
    data(&mut plot)
}

/// A chart's title: the run's `title`, then what the chart shows.
pub fn chart_title(title: &str, subject: &str) -> String {
    if title.trim().is_empty() {
        subject.to_owned()
    } else {
        format!("{title}: {subject}")
    }
}

/// The axes on `area`, the part of `root` below the title and legend: ticks chosen so their
/// labels fit, the grid, the band, the axis lines, and the labels, set with `pen` on `root`.
fn draw_axes<'a, DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &'a DrawingArea<DB, Shift>,
    pen: &Pen,
    axes: &Axes,
) -> Result<Plot<'a, DB>> {
    let (width, height) = root.dim_in_pixel();
    let (width, height) = (width as i32, height as i32);
    let tick = px(TICK_PT);
    let label_offset = tick + px(TICK_GAP_PT);
    let tick_em = Pen::em(TICK_LABEL_FONT);
    let label_em = Pen::em(AXIS_LABEL_FONT);
    let margin = px(MARGIN_PT);
    // Room for the labels: a line of text takes about an em below its top.
    let x_area = label_offset + tick_em.ceil() as i32 + px(GAP_PT) + label_em.ceil() as i32;
    let plot_height = area.dim_in_pixel().1 as i32 - x_area - margin;

    // y ticks: labels at least 1.8 em apart.
    let (y_lo, y_hi) = axes.y_labelled;
    let y_ticks = ticks(y_lo, y_hi, axes.y_scale, |ticks| {
        ticks.windows(2).all(|pair| {
            let gap = fraction(pair[1], axes.y_range, axes.y_scale)
                - fraction(pair[0], axes.y_range, axes.y_scale);
            gap * f64::from(plot_height) >= tick_em * 1.8
        })
    });
    let y_labels = tick_labels(&y_ticks.major, axes.y_scale);
    let y_label_width = y_labels
        .iter()
        .map(|label| pen.width(label, TICK_LABEL_FONT))
        .fold(0.0, f64::max);
    let y_area = label_offset + y_label_width.ceil() as i32 + px(GAP_PT) + label_em.ceil() as i32;

    // x ticks: neighbouring labels at least an em apart, the last one inside the figure.
    let right = margin * 2;
    let plot_width = width - margin - y_area - right;
    let x_ticks = ticks(axes.x_range.0, axes.x_range.1, axes.x_scale, |ticks| {
        let widths: Vec<f64> = tick_labels(ticks, axes.x_scale)
            .iter()
            .map(|label| pen.width(label, TICK_LABEL_FONT))
            .collect();
        let centre = |t: f64| fraction(t, axes.x_range, axes.x_scale) * f64::from(plot_width);
        let apart = ticks
            .windows(2)
            .zip(widths.windows(2))
            .all(|(t, w)| centre(t[1]) - centre(t[0]) >= (w[0] + w[1]) / 2.0 + tick_em);
        let inside = ticks.last().zip(widths.last()).is_none_or(|(&t, &w)| {
            centre(t) + w / 2.0 <= f64::from(plot_width + right - margin / 2)
        });
        apart && inside
    });
    let x_labels = tick_labels(&x_ticks.major, axes.x_scale);
    let (x_major, y_major) = (x_ticks.major.clone(), y_ticks.major.clone());

    let mut plot = ChartBuilder::on(area)
        .margin_left(margin)
        .margin_right(right)
        .margin_bottom(margin)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area)
        .build_cartesian_2d(
            PlotAxis {
                scale: axes.x_scale,
                range: axes.x_range,
                // No minor grid across: it would crowd the left of every decade of a sweep.
                ticks: Ticks {
                    minor: Vec::new(),
                    ..x_ticks
                },
            },
            PlotAxis {
                scale: axes.y_scale,
                range: axes.y_range,
                ticks: y_ticks,
            },
        )
        .map_err(drawing_error)?;

    // The band first, so the grid shows through it.
    if let Some((lo, hi)) = axes.band {
        plot.draw_series([Rectangle::new(
            [(axes.x_range.0, lo), (axes.x_range.1, hi)],
            BAND.filled(),
        )])
        .map_err(drawing_error)?;
    }
    // Grid, axis lines and tick marks; the labels are drawn below, with the pen.
    let no_label = |_: &f64| String::new();
    plot.configure_mesh()
        .x_label_formatter(&no_label)
        .y_label_formatter(&no_label)
        // Fully transparent text is skipped by both backends: no empty SVG elements.
        .label_style(pen.style(TICK_LABEL_FONT, TEXT).color(&TRANSPARENT))
        .bold_line_style(stroke(GRID, GRID_PT))
        .light_line_style(stroke(GRID_MINOR, GRID_PT))
        .axis_style(stroke(AXIS_LINE, THIN_PT))
        .set_all_tick_mark_size(tick)
        .draw()
        .map_err(drawing_error)?;

    let (x_pixels, y_pixels) = plot.plotting_area().get_pixel_range();
    let (axis_x, axis_y) = (x_pixels.start, y_pixels.end);
    let right_of = Direction::Right;
    for (&t, label) in x_major.iter().zip(&x_labels) {
        let (x, _) = plot.backend_coord(&(t, axes.y_range.0));
        let at = (x, axis_y + label_offset);
        let anchor = (HPos::Center, VPos::Top);
        pen.draw(root, label, TICK_LABEL_FONT, TEXT, anchor, right_of, at)?;
    }
    for (&t, label) in y_major.iter().zip(&y_labels) {
        let (_, y) = plot.backend_coord(&(axes.x_range.0, t));
        let at = (axis_x - label_offset, y);
        let anchor = (HPos::Right, VPos::Center);
        pen.draw(root, label, TICK_LABEL_FONT, TEXT, anchor, right_of, at)?;
    }
    let centre_x = (x_pixels.start + x_pixels.end) / 2;
    let anchor = (HPos::Center, VPos::Bottom);
    let at = (centre_x, height - margin);
    pen.draw(
        root,
        axes.x_label,
        AXIS_LABEL_FONT,
        TEXT,
        anchor,
        right_of,
        at,
    )?;
    let centre_y = (y_pixels.start + y_pixels.end) / 2;
    let anchor = (HPos::Center, VPos::Top);
    let at = (margin, centre_y);
    pen.draw(
        root,
        axes.y_label,
        AXIS_LABEL_FONT,
        TEXT,
        anchor,
        Direction::Up,
        at,
    )?;
    Ok(plot)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x_axis_is_logarithmic_only_beyond_a_factor_of_20() {
        assert_eq!(x_scale([1.0, 2.0, 4.0, 8.0, 16.0]), Scale::Linear);
        assert_eq!(x_scale([5.0, 100.0]), Scale::Linear);
        assert_eq!(x_scale([5.0, 101.0]), Scale::Log);
        assert_eq!(x_scale([1.0, 10.0, 100.0, 1000.0]), Scale::Log);
        assert_eq!(x_scale([0.0, 1000.0]), Scale::Linear, "0 has no logarithm");
        assert_eq!(x_scale([]), Scale::Linear);
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
                y_scale: Scale::Log,
                y_range: (1.0, 1000.0),
                y_labelled: (1.0, 100.0),
                band: Some((100.0, 1000.0)),
            };
            draw_frame(
                root,
                pen,
                &chart_title("sketch", "style"),
                legend,
                &axes,
                |plot| {
                    plot.draw_series(LineSeries::new(
                        [(1.0, 1.0), (9.0, 90.0)],
                        stroke(TEXT, LINE_PT),
                    ))
                    .map_err(drawing_error)?;
                    Ok(())
                },
            )
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
    fn a_chart_is_written_as_a_300_dpi_png_and_an_svg() {
        let dir = tempfile::tempdir().unwrap();
        let path = |ext: &str| dir.path().join(format!("sketch.{ext}"));
        let files = write(&Sketch, path).unwrap();
        assert_eq!(files, [path("png"), path("svg")]);
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
        let svg = std::fs::read_to_string(&files[1]).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
        let texts = svg_texts(&svg);
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
    }

    #[test]
    fn svg_text_is_set_in_the_embedded_dejavu_sans_only() {
        let dir = tempfile::tempdir().unwrap();
        let files = write(&Sketch, |ext| dir.path().join(format!("sketch.{ext}"))).unwrap();
        let svg = std::fs::read_to_string(&files[1]).unwrap();
        assert_svg_font_is_embedded(&svg);
    }

    /// `svg` carries DejaVu Sans (regular, and bold where text is bold) as `@font-face` rules of
    /// the font's own bytes, and its text names no other family.
    fn assert_svg_font_is_embedded(svg: &str) {
        let (head, body) = svg
            .split_once("</style></defs>")
            .expect("a <style> in <defs>");
        assert!(head.starts_with("<svg") && head.contains(">\n<defs><style>@font-face{"));
        let face = |weight: &str, font: &[u8]| {
            format!(
                "@font-face{{font-family:\"DejaVu Sans\";font-weight:{weight};\
                 src:url(data:font/ttf;base64,{}) format(\"truetype\");}}",
                BASE64.encode(font)
            )
        };
        assert!(head.contains(&face("normal", dejavu::sans::regular())));
        assert_eq!(
            head.contains(&face("bold", dejavu::sans::bold())),
            body.contains(r#"font-weight="bold""#),
            "the bold face is embedded when, and only when, some text is bold"
        );
        assert_eq!(
            head.matches("font-family").count(),
            head.matches("@font-face").count()
        );
        let families: Vec<&str> = body
            .split(r#"font-family=""#)
            .skip(1)
            .map(|rest| rest.split_once('"').unwrap().0)
            .collect();
        assert!(families.iter().all(|f| *f == "DejaVu Sans"), "{families:?}");
        // Every text element names it, and nothing else names a font.
        assert_eq!(body.matches("<text").count(), families.len());
        assert_eq!(body.matches("font-family").count(), families.len());
    }
}
