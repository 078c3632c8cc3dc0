//! The host's speed on a run's page: what summary.md says of it ([`crate::reports::host_speed`])
//! and its readings drawn over the run's time (each reading's reference time as a dot, on a log
//! scale, the committed example run's centre as a dashed line), so a machine that slowed during
//! the run shows where.

use maud::{Markup, html};

use super::dots::{LogScale, px, tick_text};
use crate::host_reference;
use crate::records::RunRecord;
use crate::records::host_speed::HostReading;
use crate::reports::host_speed::HostSpeed;

const WIDTH: f64 = 560.0;
const HEIGHT: f64 = 150.0;
const LEFT: f64 = 48.0;
const RIGHT: f64 = WIDTH - 12.0;
const TOP: f64 = 10.0;
const BOTTOM: f64 = HEIGHT - 28.0;

/// The readings of today's reference: `(seconds into the run, reference ms)`.
fn points(readings: &[HostReading]) -> Vec<(f64, f64)> {
    readings
        .iter()
        .filter(|r| r.version == host_reference::VERSION && r.profile == host_reference::PROFILE)
        .map(|r| (r.run_s, r.reference_ms()))
        .filter(|(_, v)| v.is_finite() && *v > 0.0)
        .collect()
}

/// The figure of `record`'s readings, with `reference` (the example run) as a dashed line;
/// nothing for a run without readings.
pub fn readings(record: &RunRecord, reference: Option<&RunRecord>) -> Markup {
    let points = points(&record.machine.speed);
    let Some(speed) = HostSpeed::of(record) else {
        return html! {};
    };
    let line = reference
        .filter(|r| r.run.id != record.run.id)
        .and_then(HostSpeed::of)
        .map(|s| s.center_ms);
    let values = points.iter().map(|(_, v)| *v).chain(line);
    let Some(y) = LogScale::over(values, BOTTOM, TOP) else {
        return html! {};
    };
    let span = points.iter().map(|(t, _)| *t).fold(0.0, f64::max).max(1.0);
    let x = |t: f64| LEFT + t / span * (RIGHT - LEFT);
    let described = format!(
        "the host's speed: {} readings of the reference workload over the run, {:.1} ms \
         (geometric mean){}",
        speed.readings,
        speed.center_ms,
        line.map_or(String::new(), |l| format!(
            "; the committed example run's {l:.1} ms dashed"
        ))
    );
    html! {
        figure.host {
            svg xmlns="http://www.w3.org/2000/svg" viewBox=(format!("0 0 {WIDTH} {HEIGHT}"))
                width=(WIDTH) height=(HEIGHT) role="img" aria-label=(described) {
                title { (described) }
                @for tick in y.ticks() {
                    line x1=(px(LEFT)) x2=(px(RIGHT)) y1=(px(y.at(tick))) y2=(px(y.at(tick)))
                        stroke="#e8eaed" stroke-width="1" {}
                    text x=(px(LEFT - 6.0)) y=(px(y.at(tick) + 4.0)) text-anchor="end"
                        font-size="11" fill="#5f6368" { (tick_text(tick)) }
                }
                @if let Some(l) = line {
                    line x1=(px(LEFT)) x2=(px(RIGHT)) y1=(px(y.at(l))) y2=(px(y.at(l)))
                        stroke="#1a73e8" stroke-width="1.5" stroke-dasharray="5 4" {}
                }
                line x1=(px(LEFT)) x2=(px(RIGHT)) y1=(px(y.at(speed.center_ms)))
                    y2=(px(y.at(speed.center_ms))) stroke="#202020" stroke-width="1" {}
                @for (t, v) in &points {
                    circle cx=(px(x(*t))) cy=(px(y.at(*v))) r="3.5" fill="#b3261e"
                        stroke="#fff" stroke-width="1" {}
                }
                text x=(px(LEFT)) y=(px(HEIGHT - 8.0)) font-size="11" fill="#5f6368" {
                    "0 s"
                }
                text x=(px(RIGHT)) y=(px(HEIGHT - 8.0)) text-anchor="end" font-size="11"
                    fill="#5f6368" { (format!("{span:.0} s into the run")) }
            }
            figcaption {
                "Each dot one reading of the fixed reference workload (ms, log scale; lower is \
                 faster) at its time in the run; the solid line the run's geometric mean"
                @if line.is_some() { ", the dashed line the committed example run's" }
                "."
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::run_record::tests_support::record;

    #[test]
    fn every_reading_is_a_dot_and_a_run_without_readings_draws_nothing() {
        let mut r = record();
        assert_eq!(readings(&r, None).into_string(), "");
        r.machine.speed =
            crate::records::host_speed::readings_at(&[(0.0, 30.0), (40.0, 33.0), (80.0, 45.0)]);
        let svg = readings(&r, None).into_string();
        assert_eq!(svg.matches("<circle").count(), 3, "{svg}");
        assert!(
            svg.contains("3 readings of the reference workload"),
            "{svg}"
        );
        assert!(svg.contains("80 s into the run"), "{svg}");
        assert!(!svg.contains("stroke-dasharray"), "{svg}");
    }
}
