//! Axes: scales, ranges, and which values an axis labels, and how.

use std::ops::RangeInclusive;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;

use super::*;

/// A range of an axis: `(from, to)`.
pub type Span = (f64, f64);

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    Log,
}

/// The scale of an axis of `values` that scale (sizes, times): logarithmic when they are
/// positive and span more than [`LOG_ABOVE`] (the geometric sweeps, times orders of magnitude
/// apart), linear otherwise. A quantity that adds up (a difference) is linear whatever its span.
pub fn scale_for(values: impl IntoIterator<Item = f64>) -> Scale {
    let (lo, hi) = extent(values).unwrap_or((1.0, 1.0));
    if lo > 0.0 && hi / lo > LOG_ABOVE {
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

/// An axis for values from `lo` to `hi`: padded, and from 0 on a linear axis when the values
/// start near it, so the axis reads from its natural origin.
pub fn range_for(lo: f64, hi: f64, scale: Scale) -> (f64, f64) {
    let (padded_lo, padded_hi) = padded(lo, hi, scale);
    if scale == Scale::Linear && lo > 0.0 && lo <= hi * 0.25 {
        (0.0, padded_hi)
    } else {
        (padded_lo, padded_hi)
    }
}

/// `v` as a tick label with `decimals` digits after the point and thousands separated by commas.
pub fn format_number(v: f64, decimals: usize) -> String {
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
pub(super) fn decimals(v: f64) -> usize {
    (0..=9)
        .find(|&d| {
            let scale = 10f64.powi(d as i32);
            ((v * scale).round() / scale - v).abs() <= 1e-9 * v.abs().max(1e-12)
        })
        .unwrap_or(9)
}

/// What an axis's tick labels say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TickText {
    /// The value itself.
    #[default]
    Number,
    /// The percentile a value of 1 ÷ (1 − q) stands for: 2 is `p50`, 10 `p90`, 1000 `p99.9`.
    Percentile,
}

impl TickText {
    /// Labels for `ticks` on `scale`.
    pub fn labels(self, ticks: &[f64], scale: Scale) -> Vec<String> {
        match self {
            TickText::Number => tick_labels(ticks, scale),
            TickText::Percentile => ticks
                .iter()
                .map(|&t| {
                    let q = 100.0 * (1.0 - 1.0 / t);
                    let text = format!("{q:.3}");
                    format!("p{}", text.trim_end_matches('0').trim_end_matches('.'))
                })
                .collect(),
        }
    }
}

/// Labels for `ticks`: each with its own decimals on a log axis (0.1, 1, 10), the same
/// decimals throughout on a linear one (0.5, 1.0, 1.5).
pub(super) fn tick_labels(ticks: &[f64], scale: Scale) -> Vec<String> {
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
pub(super) fn times_ten_to(mantissa: f64, exponent: i32) -> f64 {
    if exponent >= 0 {
        mantissa * 10f64.powi(exponent)
    } else {
        mantissa / 10f64.powi(-exponent)
    }
}

/// Tick sets for `lo..=hi`, most preferred first.
pub(super) fn tick_candidates(lo: f64, hi: f64, scale: Scale) -> Vec<Vec<f64>> {
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

pub(super) const DIGITS: [f64; 9] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0];

/// The values `m × 10^k` within `lo..=hi` for each of `mantissas`, every `stride`th decade.
pub(super) fn log_ticks(lo: f64, hi: f64, mantissas: &[f64], stride: i32) -> Vec<f64> {
    let within = |v: &f64| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9);
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    (first..=last)
        .filter(|k| k.rem_euclid(stride) == 0)
        .flat_map(|k| mantissas.iter().map(move |&m| times_ten_to(m, k)))
        .filter(within)
        .collect()
}

/// Evenly spaced ticks at steps of 1, 2 or 5 × 10^k, sparsest first.
pub(super) fn linear_tick_candidates(lo: f64, hi: f64) -> Vec<Vec<f64>> {
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
pub(super) fn choose_ticks(
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
pub(super) struct Ticks {
    pub(super) major: Vec<f64>,
    pub(super) minor: Vec<f64>,
}

/// Chooses the ticks for `lo..=hi` whose labels fit, with the log axes' minor grid at the
/// remaining 1..9 × 10^k.
pub(super) fn ticks(lo: f64, hi: f64, scale: Scale, fits: impl Fn(&[f64]) -> bool) -> Ticks {
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
pub fn fraction(v: f64, (lo, hi): (f64, f64), scale: Scale) -> f64 {
    match scale {
        Scale::Linear => (v - lo) / (hi - lo),
        Scale::Log => (v / lo).ln() / (hi / lo).ln(),
    }
}

/// The value at `at` along `lo..=hi` (0 at `lo`, 1 at `hi`): the inverse of [`fraction`].
pub fn value_at(at: f64, (lo, hi): (f64, f64), scale: Scale) -> f64 {
    match scale {
        Scale::Linear => lo + at * (hi - lo),
        Scale::Log => lo * (hi / lo).powf(at),
    }
}

/// An axis for plotters with our own scale, range and ticks.
pub struct PlotAxis {
    pub(super) scale: Scale,
    pub(super) range: (f64, f64),
    pub(super) ticks: Ticks,
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
