//! The checks of an experiment file past its schema, each error at `file:line:column`: repeats
//! and precision, each series on its own (repeated values, rows smaller than their columns, a
//! JSON payload cap above the documented limit), every point drawn once with one set of
//! parameters, and for a grid both axes listed and no strategy at a cell it cannot run.

use std::collections::BTreeMap;
use std::ops::Range;

use anyhow::{Result, anyhow};
use d1bench_core::generate::{INTEGER_BYTES, RowGenerator, integer_columns};
use d1bench_core::limits::MAX_STRING_BYTES;
use d1bench_core::{ProbeRequest, Strategy};

use super::{
    Columns, MAX_REPEATS, Profile, Series, SweepStudy, count, describe, expand_series,
    first_repeat, line_name, probe_point, values,
};
use crate::base::TargetKind;
use crate::base::numbers::thousands;
use crate::studies::files::located;

impl SweepStudy {
    /// Every check of the file, profile by profile; the first problem wins.
    pub(super) fn check(&self) -> Result<()> {
        let axis = self.file.x_axis;
        let y_axis = self.y_axis();
        for (name, profile) in &self.file.profile {
            self.check_repeats(profile)?;
            // Each line of a chart (strategy and label) at each x: the probe that draws it.
            let mut points: BTreeMap<(Strategy, String, u64, u64), (usize, ProbeRequest)> =
                BTreeMap::new();
            self.check_grid(name, profile)?;
            for (index, series) in profile.series.0.iter().enumerate() {
                self.check_series(series.get_ref())?;
                let earlier = &profile.series.0[..index];
                if let Some(first) = earlier.iter().position(|s| s == series) {
                    return Err(anyhow!(self.error_at(
                        Some(series.span()),
                        &format!(
                            "series {} repeats series {} exactly: every probe would run twice; \
                             remove one or change its label",
                            index + 1,
                            first + 1
                        )
                    )));
                }
                // Repeats and warm-ups of a point are the same probe: one per strategy stands
                // for them all.
                let planned = expand_series(series.get_ref(), profile, index);
                let probes = planned.iter().flat_map(|point| {
                    let label = &point.label;
                    let strategies = point.strategies.iter();
                    strategies.map(move |s| (label, point.probe(*s, 0)))
                });
                for (label, request) in probes {
                    let request = &request;
                    if let Err(e) = request.validate() {
                        return Err(anyhow!(self.error_at(
                            Some(series.span()),
                            &format!("a probe of this series is invalid: {e}")
                        )));
                    }
                    let x = axis.of_probe(request);
                    let y = y_axis.map_or(0.0, |y| y.of_probe(request));
                    let key = (request.strategy, label.clone(), x.to_bits(), y.to_bits());
                    let point = (index, probe_point(request));
                    let Some((other, drawn)) = points.get(&key) else {
                        points.insert(key, point);
                        continue;
                    };
                    let line = line_name(request.strategy, label);
                    let mut at = format!("{} = {}", axis.name(), axis.format(x));
                    if let Some(y_axis) = y_axis {
                        at.push_str(&format!(", {} = {}", y_axis.name(), y_axis.format(y)));
                    }
                    let message = match (*other == index, *drawn == point.1) {
                        (true, true) => format!(
                            "this series draws {line} at {at} twice with the same parameters \
                             ({}): its probes would run twice; remove the repeated value",
                            describe(drawn)
                        ),
                        (false, true) => format!(
                            "this series and series {} both draw {line} at {at} with the same \
                             parameters ({}): its probes would run twice; remove the point from \
                             one of them or give the series different labels",
                            other + 1,
                            describe(drawn)
                        ),
                        (same_series, false) => {
                            let (who, remedy) = if same_series {
                                (
                                    "this series draws".to_owned(),
                                    "split the series and give the parts different labels",
                                )
                            } else {
                                (
                                    format!("this series and series {} both draw", other + 1),
                                    "give the series different labels",
                                )
                            };
                            format!(
                                "{who} {line} at {at} with different parameters ({}; then {}): \
                                 a chart would mix them, as only `{}` may vary along a line; \
                                 {remedy}",
                                describe(drawn),
                                describe(&point.1),
                                axis.name(),
                            )
                        }
                    };
                    return Err(anyhow!(self.error_at(Some(series.span()), &message)));
                }
            }
        }
        Ok(())
    }

    /// `repeats` at most [`MAX_REPEATS`]; `precision` and `max-repeats` together, and
    /// `max-repeats` not below `repeats`.
    pub(super) fn check_repeats(&self, profile: &Profile) -> Result<()> {
        let repeats = profile.repeats.get_ref().get();
        let fail = |span, message: String| Err(anyhow!(self.error_at(Some(span), &message)));
        if repeats > MAX_REPEATS {
            return fail(
                profile.repeats.span(),
                format!("repeats must be 1 to {MAX_REPEATS}, got {repeats}"),
            );
        }
        match (&profile.precision, &profile.max_repeats) {
            (Some(precision), None) => fail(
                precision.span(),
                format!(
                    "`precision` needs `max-repeats`: the most repeats a point may take to get \
                     its interval within ±{}% of the median",
                    precision.get_ref().0 * 100.0
                ),
            ),
            (None, Some(max)) => fail(
                max.span(),
                "`max-repeats` applies only with `precision`; for a fixed number of repeats, \
                 give `repeats` alone"
                    .to_owned(),
            ),
            (Some(_), Some(max)) if max.get_ref().0 < repeats => fail(
                max.span(),
                format!(
                    "max-repeats ({}) is below repeats ({repeats}): every point takes `repeats` \
                     before its precision is checked, then more up to `max-repeats`",
                    max.get_ref().0
                ),
            ),
            _ => Ok(()),
        }
    }

    /// Refuses a plan with `copy` on a run whose target or baseline is not Postgres: COPY is
    /// Postgres's alone, and D1, bare SQLite and the Durable Object have nothing to run it with.
    /// Named at the file's first `copy` of `profile`, or as the command line's when an override
    /// brought it.
    pub(super) fn check_engines(
        &self,
        profile: &str,
        plan: &super::SweepPlan,
        target: TargetKind,
        baseline: Option<TargetKind>,
    ) -> Result<()> {
        let copies = plan
            .points
            .iter()
            .any(|p| p.strategies.contains(&Strategy::Copy));
        let other = std::iter::once(target)
            .chain(baseline)
            .find(|t| !t.is_postgres());
        let (true, Some(other)) = (copies, other) else {
            return Ok(());
        };
        let message = format!(
            "`copy` is Postgres's COPY FROM STDIN, which {other} does not have: run it on \
             `--target hyperdrive` (or `remote-hyperdrive`) with `--no-baseline`, or leave `copy` out"
        );
        let named = self.file.profile.get(profile).and_then(|p| {
            p.series.0.iter().find_map(|series| {
                series
                    .get_ref()
                    .strategies
                    .0
                    .iter()
                    .find(|s| *s.get_ref() == Strategy::Copy)
            })
        });
        Err(anyhow!(match named {
            Some(value) => self.error_at(Some(value.span()), &message),
            None => message,
        }))
    }

    pub(super) fn error_at(&self, span: Option<Range<usize>>, message: &str) -> String {
        located(&self.path, &self.source, span, message)
    }

    /// What is wrong with one series on its own: a list that repeats a value (its points would
    /// be drawn twice), or a row size below what its columns take (rows would be bigger than
    /// the file says).
    pub(super) fn check_series(&self, series: &Series) -> Result<()> {
        self.check_json_payload(series)?;
        let repeat = first_repeat(&series.strategies)
            .map(|v| ("strategies", v.span()))
            .or_else(|| {
                (series.orms.as_ref())
                    .and_then(|o| first_repeat(o))
                    .map(|v| ("orms", v.span()))
            })
            .or_else(|| first_repeat(&series.columns).map(|v| ("columns", v.span())))
            .or_else(|| first_repeat(&series.row_bytes).map(|v| ("row-bytes", v.span())))
            .or_else(|| first_repeat(&series.escape_share).map(|v| ("escape-share", v.span())))
            .or_else(|| first_repeat(&series.nul_share).map(|v| ("nul-share", v.span())))
            .or_else(|| {
                first_repeat(&series.non_ascii_share).map(|v| ("non-ascii-share", v.span()))
            })
            .or_else(|| first_repeat(&series.indexes).map(|v| ("indexes", v.span())));
        if let Some((key, span)) = repeat {
            let value = &self.source[span.clone()];
            return Err(anyhow!(self.error_at(
                Some(span),
                &format!(
                    "`{key}` lists {value} twice: the series would draw the same points twice, \
                     running each of their probes twice; remove one"
                )
            )));
        }
        let widest = values(&series.columns)
            .map(|Columns(c)| c)
            .max()
            .unwrap_or(1);
        let least = RowGenerator::min_row_bytes(widest);
        for row_bytes in &series.row_bytes.0 {
            let asked = *row_bytes.get_ref();
            let message = if asked == 0 {
                "row-bytes = 0 asks for rows without payload, which measure nothing; a row \
                 must be at least 1 byte"
                    .to_owned()
            } else if asked < least {
                let integers = integer_columns(widest);
                format!(
                    "row-bytes = {asked} is below what {widest} columns take (at least {least} \
                     bytes: {} of {INTEGER_BYTES} bytes each, while the {} can be empty); rows \
                     would be written at {least} bytes, not {asked}",
                    count(integers, "integer column"),
                    count(widest - integers, "text column"),
                )
            } else {
                continue;
            };
            return Err(anyhow!(self.error_at(Some(row_bytes.span()), &message)));
        }
        Ok(())
    }

    /// A grid's own checks: two different axes, each listed by every series and taking two
    /// values or more over the profile, and no strategy asked for at a cell where a documented
    /// limit refuses its first row (the map marks such cells; the file must not ask for them).
    fn check_grid(&self, name: &str, profile: &Profile) -> Result<()> {
        let Some(y) = &self.file.y_axis else {
            return Ok(());
        };
        let (x_axis, y_axis) = (self.file.x_axis, *y.get_ref());
        if x_axis == y_axis {
            return Err(anyhow!(self.error_at(
                Some(y.span()),
                &format!(
                    "y-axis is `{}`, the x axis too: a grid needs two different axes",
                    y_axis.name()
                )
            )));
        }
        for (index, series) in profile.series.0.iter().enumerate() {
            for axis in [x_axis, y_axis] {
                if !series.get_ref().lists(axis) {
                    return Err(anyhow!(self.error_at(
                        Some(series.span()),
                        &format!(
                            "series {} of profile `{name}` does not list `{}`, an axis of the \
                             grid: write the values it takes",
                            index + 1,
                            axis.name()
                        )
                    )));
                }
            }
        }
        for axis in [x_axis, y_axis] {
            let mut taken: Vec<f64> = profile
                .series
                .0
                .iter()
                .flat_map(|s| expand_series(s.get_ref(), profile, 0))
                .map(|p| axis.of_probe(&p.request))
                .collect();
            taken.sort_by(f64::total_cmp);
            taken.dedup();
            if taken.len() < 2 {
                let first = profile.series.0.first().map(|s| s.span());
                return Err(anyhow!(self.error_at(
                    first,
                    &format!(
                        "the grid's axis `{}` takes one value ({}) in profile `{name}`: a grid \
                         needs two or more on each axis; list more, or drop `y-axis` for a \
                         sweep",
                        axis.name(),
                        taken.first().map_or("none".into(), |v| axis.format(*v))
                    )
                )));
            }
        }
        for series in &profile.series.0 {
            for point in expand_series(series.get_ref(), profile, 0) {
                // D1's walls; COPY has none to meet (and no D1 plan).
                for &strategy in point.strategies.iter().filter(|s| s.on_every_engine()) {
                    let probe = point.probe(strategy, 0);
                    if let Some(wall) = d1bench_core::sql::wall(&probe) {
                        return Err(anyhow!(self.error_at(
                            Some(series.span()),
                            &format!(
                                "{strategy} cannot run at {} = {}, {} = {}: one row alone takes \
                                 {} {}, past D1's documented limit of {} ({}), so every \
                                 statement would be refused; leave {strategy} out of the cells \
                                 past that limit (the map marks them)",
                                x_axis.name(),
                                x_axis.format(x_axis.of_probe(&probe)),
                                y_axis.name(),
                                y_axis.format(y_axis.of_probe(&probe)),
                                thousands(wall.needed),
                                wall.unit,
                                wall.limit,
                                wall.refusal.name(),
                            )
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// A series' `json-payload-bytes` above the documented string limit.
    pub(super) fn check_json_payload(&self, series: &Series) -> Result<()> {
        match &series.json_payload_bytes {
            Some(bytes) if *bytes.get_ref() == 0 || *bytes.get_ref() > MAX_STRING_BYTES => {
                Err(anyhow!(self.error_at(
                    Some(bytes.span()),
                    &format!(
                        "json-payload-bytes = {} is outside 1 to {MAX_STRING_BYTES}, D1's \
                         documented string limit: the planner never plans past a documented \
                         limit (local D1 accepts more, production does not)",
                        bytes.get_ref()
                    )
                )))
            }
            Some(bytes) if !values(&series.strategies).any(|s| s == Strategy::Json) => {
                Err(anyhow!(self.error_at(
                    Some(bytes.span()),
                    "json-payload-bytes caps json's payloads, but this series has no json \
                     strategy"
                )))
            }
            _ => Ok(()),
        }
    }
}
