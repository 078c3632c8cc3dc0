//! Text on a chart: the embedded DejaVu Sans, registered with plotters and measured with
//! ab_glyph, and [`Pen`], which lays text out identically in both formats.

use std::sync::OnceLock;

use ab_glyph::{Font as _, FontRef, PxScale, PxScaleFont, ScaleFont};
use anyhow::{Context, Result};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::*;

/// The embedded fonts, registered with plotters and read by ab_glyph for laying text out.
pub(super) struct Fonts {
    pub(super) regular: FontRef<'static>,
    pub(super) bold: FontRef<'static>,
    /// Font units per em (2048 for DejaVu Sans).
    pub(super) units_per_em: f32,
    /// The cap height (top of "H") and descent, in em: where a centred or bottom-anchored
    /// text's baseline goes.
    pub(super) cap_height: f64,
    pub(super) descent: f64,
}

/// Registers DejaVu Sans (regular and bold) with plotters once per process and reads its metrics.
pub(super) fn fonts() -> Result<&'static Fonts> {
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
    pub(super) fn baseline(&self, v: VPos) -> f64 {
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
pub(super) enum Direction {
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
    pub(super) format: Format,
    pub(super) fonts: &'static Fonts,
}

impl Pen {
    /// The em size of `font` in pixels.
    pub(super) fn em(font: Font) -> f64 {
        font.points * DPI / 72.0
    }

    /// The face of `font` scaled to its em size. ab_glyph, like plotters' bitmap text, scales
    /// a font by its ascent-to-descent height, not by its em.
    pub(super) fn scaled(&self, font: Font) -> PxScaleFont<&'static FontRef<'static>> {
        let face = if font.bold {
            &self.fonts.bold
        } else {
            &self.fonts.regular
        };
        let height = Self::em(font) as f32 * face.height_unscaled() / self.fonts.units_per_em;
        face.as_scaled(PxScale::from(height))
    }

    /// Width of `text` in pixels: advances plus kerning.
    pub(super) fn width(&self, text: &str, font: Font) -> f64 {
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
    pub(super) fn style(&self, font: Font, color: RGBColor) -> TextStyle<'static> {
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
    pub(super) fn draw<DB: DrawingBackend>(
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
