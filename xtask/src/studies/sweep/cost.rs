//! What a sweep's probes cost on Cloudflare: each probe one measured invocation, its rows
//! written once more for every secondary index, and the rows its count and checksum read.

use d1bench_core::{CallShape, RowGenerator, checksum};

use super::PlannedProbe;
use crate::studies::cost::{Cost, Invocation};

/// D1 queries the Worker makes in a probe's measured invocation: the INSERT calls (one per row
/// for per-row, one batch otherwise; a library's as `base::orm::emits` models them). Creating the
/// table, counting and checksumming come in invocations of their own.
fn queries(probe: &PlannedProbe) -> usize {
    if let Some(orm) = probe.orm {
        let (columns, rows) = (probe.request.columns, probe.request.rows);
        return crate::base::orm::emits(orm.orm, orm.idiom, columns, rows).d1_calls;
    }
    match probe.request.strategy.calls() {
        CallShape::OneCallPerStatement => probe.request.rows,
        CallShape::OneBatch | CallShape::OneExec => 1,
        CallShape::OneCopy => {
            let per = probe
                .request
                .rows_per_statement
                .unwrap_or(probe.request.rows);
            probe.request.rows.div_ceil(per.max(1))
        }
    }
}

/// The cost of a sweep's probes, warm-ups included; each session after the first is a fresh
/// Worker and database, with a health check of its own.
pub fn of(probes: &[PlannedProbe]) -> Cost {
    let sessions = probes.iter().map(|p| p.session + 1).max().unwrap_or(1);
    let mut cost = Cost::of_invocations(
        probes
            .iter()
            .map(|p| {
                let r = &p.request;
                let generator = RowGenerator::new(r.columns, r.row_bytes, r.seed, r.text);
                let longest = checksum::longest_code(&generator);
                Invocation {
                    queries: queries(p),
                    rows_written: r.rows * (1 + r.indexes),
                    reads: r.rows + checksum::rows_read(r.rows, longest),
                }
            })
            .collect(),
    );
    cost.worker_requests += sessions - 1;
    cost
}

#[cfg(test)]
mod tests {
    use super::*;
    use d1bench_core::Strategy;

    fn probe(strategy: Strategy, rows: usize, indexes: usize) -> PlannedProbe {
        PlannedProbe {
            session: 0,
            point: 0,
            series: 0,
            label: String::new(),
            warmup: false,
            repeat: 0,
            orm: None,
            worker: None,
            request: d1bench_core::ProbeRequest {
                probe_id: 1,
                strategy,
                columns: 8,
                rows,
                row_bytes: 200,
                seed: 1,
                rows_per_statement: None,
                json_payload_bytes: None,
                text: d1bench_core::TextMix::default(),
                indexes,
                debug_corrupt: None,
                debug_slow_percent: None,
            },
        }
    }

    #[test]
    fn every_secondary_index_is_billed_as_one_more_row_written_per_row() {
        let cost = of(&[
            probe(Strategy::Bound, 1_000, 0),
            probe(Strategy::Literal, 1_000, 2),
            probe(Strategy::PerRow, 10, 8),
        ]);
        assert_eq!(cost.rows_written, 1_000 + 3 * 1_000 + 9 * 10);
        // The count and the checksum read the rows, not the index entries.
        // Exactly: each probe's count and checksum over its rows of 8 columns of 200 bytes.
        let generator = RowGenerator::new(8, 200, 1, d1bench_core::TextMix::default());
        let longest = checksum::longest_code(&generator);
        let read = |rows| rows + checksum::rows_read(rows, longest);
        assert_eq!(cost.rows_read, read(1_000) + read(1_000) + read(10));
    }
}
