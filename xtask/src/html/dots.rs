//! The pages' own small figures, inline SVG written with the same templates as the pages: a
//! line's points, each as its estimate and interval with the sessions' values as dots beside it
//! ([`spread`]), and a compared point's ratio with its interval against its threshold
//! ([`strip`]). Both on a log scale, since times and ratios vary by factors.

use maud::{Markup, html};

use super::findings::Spread;
use crate::base::numbers::num;
use crate::studies::sweep::Axis;

/// A log scale from `low` to `high` (both positive) onto `left..right` pixels.
#[derive(Debug, Clone, Copy)]
pub(super) struct LogScale {
    low: f64,
    high: f64,
    left: f64,
    right: f64,
}

impl LogScale {
    /// The scale over `values` (those positive and finite), widened by 5% on each side; `None`
    /// without any.
    pub(super) fn over(
        values: impl Iterator<Item = f64>,
        left: f64,
        right: f64,
    ) -> Option<LogScale> {
        let (mut low, mut high) = (f64::INFINITY, 0.0_f64);
        for v in values.filter(|v| v.is_finite() && *v > 0.0) {
            low = low.min(v);
            high = high.max(v);
        }
        if !low.is_finite() {
            return None;
        }
        if high / low < 1.2 {
            let middle = (high * low).sqrt();
            (low, high) = (middle / 1.1, middle * 1.1);
        }
        let pad = (high / low).ln() * 0.05;
        Some(LogScale {
            low: low * (-pad).exp(),
            high: high * pad.exp(),
            left,
            right,
        })
    }

    pub(super) fn at(&self, v: f64) -> f64 {
        let v = v.clamp(self.low, self.high);
        self.left + (v / self.low).ln() / (self.high / self.low).ln() * (self.right - self.left)
    }

    /// Ticks at 1, 2 and 5 times the powers of ten within the scale (1, 2, 5 only where the
    /// scale spans more than two decades).
    pub(super) fn ticks(&self) -> Vec<f64> {
        let decades = (self.high / self.low).log10();
        let steps: &[f64] = if decades > 2.0 {
            &[1.0]
        } else if decades > 0.7 {
            &[1.0, 2.0, 5.0]
        } else {
            &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0]
        };
        let mut ticks = Vec::new();
        let mut power = 10f64.powf(self.low.log10().floor());
        while power <= self.high {
            for step in steps {
                let tick = power * step;
                if tick >= self.low && tick <= self.high {
                    ticks.push(tick);
                }
            }
            power *= 10.0;
        }
        ticks
    }
}

/// A tick's label: `20`, `1.5`, `0.50`.
pub(super) fn tick_text(v: f64) -> String {
    if v >= 1.0 && v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        num(v)
    }
}

/// A pixel coordinate as an SVG attribute.
pub(super) fn px(v: f64) -> String {
    format!("{v:.1}")
}

/// Where the label column ends, the plot begins and ends, and the value column begins.
const PLOT_LEFT: f64 = 64.0;
const PLOT_RIGHT: f64 = 500.0;
const WIDTH: f64 = 720.0;
const ROW: f64 = 20.0;
const TOP: f64 = 26.0;

/// A line's points along `axis`: one row per point, its interval as a bar, its estimate as a
/// diamond and each session's value as a dot, the figures written at the right.
pub fn spread(figure: &Spread, axis: Axis) -> Markup {
    let values = figure.rows.iter().flat_map(|r| {
        let s = r.summary;
        r.sessions
            .iter()
            .copied()
            .chain(s.map(|s| s.median))
            .chain(
                s.and_then(|s| s.ci)
                    .into_iter()
                    .flat_map(|c| [c.low, c.high]),
            )
            .chain(figure.reference)
    });
    let Some(scale) = LogScale::over(values, PLOT_LEFT, PLOT_RIGHT) else {
        return html! { p { "No successful repeat to draw." } };
    };
    let height = TOP + ROW * figure.rows.len() as f64 + 8.0;
    let bottom = height - 6.0;
    let described = format!(
        "{}: at each {} the estimate with its interval, and each session's value as a dot",
        figure.title,
        axis.name()
    );
    html! {
        svg xmlns="http://www.w3.org/2000/svg" viewBox=(format!("0 0 {WIDTH} {}", px(height)))
            width=(WIDTH) height=(px(height)) role="img" aria-label=(described)
            font-family="system-ui, sans-serif" font-size="11" {
            title { (described) }
            @for tick in scale.ticks() {
                line x1=(px(scale.at(tick))) x2=(px(scale.at(tick))) y1=(px(TOP - 6.0))
                    y2=(px(bottom)) stroke="#e3e3e3" {}
                text x=(px(scale.at(tick))) y="12" text-anchor="middle" fill="#5f6368" {
                    (tick_text(tick))
                }
            }
            @if let Some(reference) = figure.reference {
                line x1=(px(scale.at(reference))) x2=(px(scale.at(reference))) y1=(px(TOP - 6.0))
                    y2=(px(bottom)) stroke="#202020" stroke-dasharray="4 3" {}
            }
            text x="4" y="12" fill="#5f6368" { (axis.name()) }
            text x=(px(PLOT_RIGHT + 12.0)) y="12" fill="#5f6368" { "estimate (interval), sessions" }
            @for (i, row) in figure.rows.iter().enumerate() {
                @let y = TOP + ROW * i as f64 + ROW / 2.0;
                text x=(px(PLOT_LEFT - 8.0)) y=(px(y + 4.0)) text-anchor="end" { (axis.format(row.x)) }
                @if let Some(s) = row.summary {
                    @if let Some(ci) = s.ci {
                        line x1=(px(scale.at(ci.low))) x2=(px(scale.at(ci.high))) y1=(px(y))
                            y2=(px(y)) stroke="#0072b2" stroke-width="3" stroke-linecap="round" {}
                    }
                    @for (j, v) in row.sessions.iter().enumerate() {
                        circle cx=(px(scale.at(*v))) cy=(px(y - 5.0 + 2.5 * (j % 5) as f64))
                            r="2.6" fill="#e69f00" fill-opacity="0.8" stroke="#8a5a00"
                            stroke-width="0.5" {}
                    }
                    @let (cx, cy) = (scale.at(s.median), y);
                    path d=(format!("M {} {} l 5 5 l -5 5 l -5 -5 Z", px(cx), px(cy - 5.0)))
                        fill="#202020" {}
                    text x=(px(PLOT_RIGHT + 12.0)) y=(px(y + 4.0)) {
                        (super::with_interval(s.median, s.ci.map(|c| (c.low, c.high))))
                        " · " (row.sessions.len()) " sessions"
                    }
                } @else {
                    text x=(px(PLOT_RIGHT + 12.0)) y=(px(y + 4.0)) fill="#5f6368" { "no time" }
                }
            }
        }
    }
}

/// The shared scale of a comparison's strips: every ratio, interval end and threshold shown,
/// within a hundredfold either way.
#[derive(Debug, Clone, Copy)]
pub struct StripScale(LogScale);

/// A strip's width in pixels.
const STRIP: f64 = 240.0;

impl StripScale {
    pub fn over(values: impl Iterator<Item = f64>) -> StripScale {
        let values = values.chain([1.0]).map(|v| v.clamp(0.01, 100.0));
        StripScale(LogScale::over(values, 6.0, STRIP - 6.0).expect("1 is always among them"))
    }
}

/// One compared point: the band inside its threshold (`1 / t` to `t`) shaded, a line at 1, its
/// interval as a bar and b ÷ a as a dot, coloured by `class` (`slower`, `faster` or other).
pub fn strip(
    scale: StripScale,
    ratio: Option<f64>,
    interval: Option<(f64, f64)>,
    threshold: Option<f64>,
    class: &str,
) -> Markup {
    let s = scale.0;
    let colour = match class {
        "slower" => "#b3261e",
        "faster" => "#1b7f3b",
        _ => "#5f6368",
    };
    let described = match ratio {
        Some(r) => format!(
            "b ÷ a {}{}",
            super::ratio_with_interval(r, interval),
            threshold.map_or(String::new(), |t| format!(", threshold {t:.2}"))
        ),
        None => "no ratio".to_owned(),
    };
    html! {
        svg xmlns="http://www.w3.org/2000/svg" viewBox=(format!("0 0 {STRIP} 18"))
            width=(STRIP) height="18" role="img" aria-label=(described) {
            title { (described) }
            @if let Some(t) = threshold {
                rect x=(px(s.at(1.0 / t))) y="2" width=(px(s.at(t) - s.at(1.0 / t))) height="14"
                    fill="#e8eaed" {}
            }
            line x1=(px(s.at(1.0))) x2=(px(s.at(1.0))) y1="0" y2="18" stroke="#202020"
                stroke-width="1" {}
            @if let Some((low, high)) = interval {
                line x1=(px(s.at(low))) x2=(px(s.at(high))) y1="9" y2="9" stroke=(colour)
                    stroke-width="3" stroke-linecap="round" {}
            }
            @if let Some(r) = ratio {
                circle cx=(px(s.at(r))) cy="9" r="4" fill=(colour) stroke="#fff" stroke-width="1" {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::findings::SpreadRow;
    use crate::stats::{Interval, Method, Summary};

    fn summary(median: f64, low: f64, high: f64) -> Summary {
        let mut s = Summary::of(&[median]).unwrap();
        s.ci = Some(Interval {
            low,
            high,
            coverage: 0.95,
            method: Method::BetweenSessions,
        });
        s.sessions = 3;
        s
    }

    #[test]
    fn a_spread_draws_each_interval_estimate_and_session() {
        let figure = Spread {
            label: String::new(),
            title: "bound: ms per 1,000 rows".into(),
            reference: None,
            rows: vec![
                SpreadRow {
                    x: 8.0,
                    summary: Some(summary(10.0, 8.0, 12.5)),
                    sessions: vec![9.0, 10.0, 11.0],
                },
                SpreadRow {
                    x: 64.0,
                    summary: None,
                    sessions: vec![],
                },
            ],
        };
        let svg = spread(&figure, Axis::Columns).into_string();
        assert!(
            svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            "{svg}"
        );
        assert_eq!(svg.matches("<circle").count(), 3, "{svg}");
        assert_eq!(svg.matches("stroke-width=\"3\"").count(), 1, "{svg}");
        assert!(svg.contains("10.0 (8.00–12.5) · 3 sessions"), "{svg}");
        assert!(svg.contains(">no time</text>"), "{svg}");
        // Every element is closed, as SVG inside HTML needs.
        assert_eq!(svg.matches("<line").count(), svg.matches("</line>").count());
    }

    #[test]
    fn a_strip_shades_its_threshold_and_places_its_ratio_on_a_log_scale() {
        let scale = StripScale::over([0.5, 2.0].into_iter());
        let svg = strip(scale, Some(1.0), Some((0.9, 1.1)), Some(1.05), "same").into_string();
        assert!(svg.contains("<rect"), "{svg}");
        // 1 is halfway between 0.5 and 2 on a log scale.
        assert!(svg.contains("<circle cx=\"120.0\""), "{svg}");
        assert!(
            svg.contains("b ÷ a 1.00 (0.90–1.10), threshold 1.05"),
            "{svg}"
        );
        let none = strip(scale, None, None, None, "same").into_string();
        assert!(!none.contains("<circle"), "{none}");
    }
}
