//! Whether a load point ran below saturation, from its records alone: the target saturated
//! when requests in flight reached the cap (a request waited for a free thread), when latency
//! outgrew the service time measured one request at a time before the point, or when latency
//! grew through the point (a queue that does not drain); apart from that, whether the load
//! generator itself fell behind its timetable (its own lateness, measured). A saturated point
//! reports its capacity (the goodput it sustained) and how fast its queue grew, not percentiles.

use std::collections::BTreeMap;
use std::fmt;

use crate::base::TargetKind;
use crate::stats::{median, nearest_rank};
use crate::studies::workload::row::{OpRow, Phase};

/// Latency (p50) this many times the calibrated service time (p50, one request at a time, or
/// [`SERVICE_FLOOR_MS`] if less) says a queue stands in front of the target.
pub const LATENCY_OUTGROWS: f64 = 3.0;

/// The least service time the latency is held to: in-process calls of a few microseconds are
/// below the timer's and the scheduler's own jitter, which no queue causes.
pub const SERVICE_FLOOR_MS: f64 = 1.0;

/// Latency growing faster than this many seconds per second of load says the queue does not
/// drain.
pub const QUEUE_GROWTH_LIMIT: f64 = 0.01;

/// In runs that do not record the cap on requests in flight: a request that waited more than
/// this many ms for a free thread found every one busy.
pub const SLOT_WAIT_MS: f64 = 1.0;

/// The generator fell behind when the 99th percentile of its own lateness is above this many
/// ms, or above a tenth of the time between two requests, whichever is larger.
pub const LATE_TOLERANCE_MS: f64 = 1.0;

/// What says a point saturated the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Saturation {
    /// Requests in flight reached the cap (`max-in-flight`): the next had to wait for a thread.
    InFlightCap,
    /// The point's p50 latency is more than [`LATENCY_OUTGROWS`] times the service time (at
    /// least [`SERVICE_FLOOR_MS`]).
    LatencyOutgrowsService,
    /// Latency grew through the point faster than [`QUEUE_GROWTH_LIMIT`].
    QueueGrows,
}

impl fmt::Display for Saturation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Saturation::InFlightCap => "in flight at the cap",
            Saturation::LatencyOutgrowsService => "latency outgrew the service time",
            Saturation::QueueGrows => "queue grew",
        })
    }
}

/// How one point ran.
#[derive(Debug, Clone, PartialEq)]
pub struct PointLoad {
    /// What says the target saturated; empty below saturation.
    pub saturated: Vec<Saturation>,
    /// The slope of latency against due time over the measured requests: seconds of queue
    /// added per second of load (about 0 below saturation).
    pub queue_growth_s_per_s: f64,
    /// p50 of the calibration's service time (one request at a time, outside clock), ms; none
    /// in runs before calibration.
    pub service_p50_ms: Option<f64>,
    /// p50 latency of the point's measured requests, every arm together.
    pub latency_p50_ms: Option<f64>,
    /// The 99th percentile of the generator's own lateness (due to handed over), ms; none in
    /// runs before it was recorded.
    pub late_p99_ms: Option<f64>,
    /// Whether the generator itself fell behind its timetable.
    pub generator_behind: bool,
    /// Whether the point's service time was measured before it (runs since arms share points):
    /// only then do its reports put capacity in place of percentiles when it saturated.
    pub calibrated: bool,
}

impl PointLoad {
    pub fn is_saturated(&self) -> bool {
        !self.saturated.is_empty()
    }

    /// Whether the point's percentiles give way to its capacity in the reports: saturated,
    /// and measured in this design (older runs' summaries stay as committed).
    pub fn shows_capacity(&self) -> bool {
        self.calibrated && self.is_saturated()
    }

    /// `below saturation`, or `saturated (in flight at the cap, queue grew)`.
    pub fn describe(&self) -> String {
        if self.saturated.is_empty() {
            "below saturation".into()
        } else {
            let why: Vec<String> = self.saturated.iter().map(|s| s.to_string()).collect();
            format!("saturated ({})", why.join(", "))
        }
    }
}

/// Every point's load, by target and point id; `cap` is the run's `max-in-flight` when its
/// points.csv records it.
pub fn points(rows: &[OpRow], cap: Option<usize>) -> BTreeMap<(TargetKind, usize), PointLoad> {
    // Per point: its measured requests, and its calibration's.
    type Phases<'a> = (Vec<&'a OpRow>, Vec<&'a OpRow>);
    let mut by_point: BTreeMap<(TargetKind, usize), Phases> = BTreeMap::new();
    for r in rows {
        let entry = by_point.entry((r.target, r.point)).or_default();
        match r.phase {
            Phase::Measure => entry.0.push(r),
            Phase::Calibrate => entry.1.push(r),
            Phase::Warmup => {}
        }
    }
    by_point
        .into_iter()
        .filter(|(_, (measured, _))| !measured.is_empty())
        .map(|(key, (measured, calibration))| (key, load(&measured, &calibration, cap)))
        .collect()
}

/// The most requests in flight at once: sent to answered, from the records' own times.
fn most_in_flight(rows: &[&OpRow]) -> usize {
    let mut events: Vec<(f64, i32)> = rows
        .iter()
        .filter_map(|r| Some([(r.sent_ms?, 1), (r.answered_ms?, -1)]))
        .flatten()
        .collect();
    // An answer and a send at the same instant: the answer frees its thread first.
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut now, mut most) = (0i32, 0i32);
    for (_, step) in events {
        now += step;
        most = most.max(now);
    }
    most as usize
}

fn load(measured: &[&OpRow], calibration: &[&OpRow], cap: Option<usize>) -> PointLoad {
    let service_p50_ms = median(&calibration.iter().map(|r| r.service_ms).collect::<Vec<_>>());
    let latency_p50_ms = median(&measured.iter().map(|r| r.latency_ms).collect::<Vec<_>>());
    let queue_growth_s_per_s = slope(
        &measured
            .iter()
            .map(|r| (r.scheduled_ms, r.latency_ms))
            .collect::<Vec<_>>(),
    );
    let mut saturated = Vec::new();
    let at_cap = match cap {
        Some(cap) => most_in_flight(measured) >= cap,
        None => measured
            .iter()
            .any(|r| r.lag_ms - r.late_ms.unwrap_or(0.0) > SLOT_WAIT_MS),
    };
    if at_cap {
        saturated.push(Saturation::InFlightCap);
    }
    if let (Some(service), Some(latency)) = (service_p50_ms, latency_p50_ms)
        && latency > LATENCY_OUTGROWS * service.max(SERVICE_FLOOR_MS)
    {
        saturated.push(Saturation::LatencyOutgrowsService);
    }
    if queue_growth_s_per_s > QUEUE_GROWTH_LIMIT {
        saturated.push(Saturation::QueueGrows);
    }
    let mut late: Vec<f64> = measured.iter().filter_map(|r| r.late_ms).collect();
    late.sort_by(f64::total_cmp);
    let late_p99_ms = (!late.is_empty()).then(|| late[nearest_rank(late.len(), 0.99) - 1]);
    let interval_ms = 1000.0 / measured[0].rate;
    PointLoad {
        saturated,
        queue_growth_s_per_s,
        service_p50_ms,
        latency_p50_ms,
        late_p99_ms,
        generator_behind: late_p99_ms
            .is_some_and(|l| l > LATE_TOLERANCE_MS.max(interval_ms / 10.0)),
        calibrated: !calibration.is_empty(),
    }
}

/// The least-squares slope of y on x (0 with fewer than two distinct x).
pub fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    if points.len() < 2 {
        return 0.0;
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx == 0.0 {
        return 0.0;
    }
    points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>() / sxx
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies::workload::row::tests_support::row;

    fn at(seq: u64, scheduled_ms: f64, latency_ms: f64, lag_ms: f64, phase: Phase) -> OpRow {
        OpRow {
            seq,
            scheduled_ms,
            latency_ms,
            service_ms: latency_ms,
            lag_ms,
            late_ms: Some(0.0),
            phase,
            ..row()
        }
    }

    fn calibration() -> Vec<OpRow> {
        (0..8)
            .map(|i| at(i, 0.0, 2.0, 0.0, Phase::Calibrate))
            .collect()
    }

    /// Steady latency near the service time: below saturation, no queue growth.
    #[test]
    fn a_steady_point_is_below_saturation() {
        let mut rows = calibration();
        rows.extend((0..200).map(|i| {
            at(
                i,
                i as f64 * 10.0,
                2.0 + (i % 3) as f64,
                0.1,
                Phase::Measure,
            )
        }));
        let load = &points(&rows, None)[&(TargetKind::Local, 1)];
        assert!(!load.is_saturated(), "{load:?}");
        assert!(load.queue_growth_s_per_s.abs() < 1e-3);
        assert!(!load.generator_behind);
    }

    /// A queue that grows 20 ms for every 100 ms of load: saturated on all three counts, its
    /// growth 0.2 s/s; a generator late by 30 ms is behind, apart from the target.
    #[test]
    fn a_growing_queue_is_saturation_and_its_growth_is_measured() {
        let mut rows = calibration();
        rows.extend((0..100).map(|i| OpRow {
            late_ms: Some(30.0),
            ..at(
                i,
                i as f64 * 100.0,
                2.0 + 20.0 * i as f64,
                40.0 + 20.0 * i as f64,
                Phase::Measure,
            )
        }));
        let load = &points(&rows, None)[&(TargetKind::Local, 1)];
        assert_eq!(
            load.saturated,
            vec![
                Saturation::InFlightCap,
                Saturation::LatencyOutgrowsService,
                Saturation::QueueGrows
            ]
        );
        assert!((load.queue_growth_s_per_s - 0.2).abs() < 1e-9);
        assert!(load.generator_behind);
        assert!(
            load.describe()
                .starts_with("saturated (in flight at the cap")
        );
    }

    /// With the cap recorded, reaching it is what counts, from the requests' own send and
    /// answer times: 3 overlapping of a cap of 3 is at the cap, of a cap of 4 is not, whatever
    /// a thread's wake-up added to the lag.
    #[test]
    fn the_cap_is_reached_when_that_many_requests_overlap() {
        let mut rows = calibration();
        rows.extend((0..3).map(|i| OpRow {
            sent_ms: Some(i as f64),
            answered_ms: Some(10.0 + i as f64),
            lag_ms: 5.0,
            ..at(i, i as f64, 2.0, 5.0, Phase::Measure)
        }));
        rows.push(OpRow {
            sent_ms: Some(12.0),
            answered_ms: Some(13.0),
            ..at(3, 12.0, 2.0, 0.0, Phase::Measure)
        });
        let at_cap = |cap| {
            points(&rows, Some(cap))[&(TargetKind::Local, 1)]
                .saturated
                .clone()
        };
        assert_eq!(at_cap(3), [Saturation::InFlightCap]);
        assert!(at_cap(4).is_empty());
    }
}
