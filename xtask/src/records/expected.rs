//! What the host expects of a sweep's probes, computed once per distinct probe rather than once
//! per probe: the shape of its plan and the content checksum of the rows that must remain.
//!
//! Every strategy and repeat at a point writes the same generated rows (the rows depend on the
//! columns, row size, text mix, seed and count, never on the strategy or the probe's id), so the
//! full column sweep's 660 probes need 17 checksums of their rows, not 660; and a plan's shape
//! depends on the probe's id only through the length of its table's name. Each probe is still
//! checked against the full expectation, so reconciliation is exactly as strict; what goes is
//! the harness's time spent computing the same numbers again (about 0.4 s per 10 MB probe on
//! this machine's 2 cores, most of the harness's share of a run before).

use std::collections::HashMap;

use d1bench_core::{Checksum, Plan, ProbeRequest, RowGenerator, sql};

use super::reconcile::PlanShape;

/// The expectations computed so far in one run, keyed by what they depend on.
#[derive(Debug)]
pub struct Expectations {
    /// The target's planner (D1's, or Postgres's for the hyperdrive target).
    planner: fn(&ProbeRequest) -> Plan,
    shapes: HashMap<String, PlanShape>,
    checksums: HashMap<String, Checksum>,
}

impl Default for Expectations {
    /// The expectations of a target that runs D1's plan.
    fn default() -> Self {
        Expectations::planned_by(sql::plan)
    }
}

impl Expectations {
    /// The expectations of a target whose statements `planner` plans.
    pub fn planned_by(planner: fn(&ProbeRequest) -> Plan) -> Self {
        Expectations {
            planner,
            shapes: HashMap::new(),
            checksums: HashMap::new(),
        }
    }

    /// The shape of the host's plan of `probe`.
    pub fn shape(&mut self, probe: &ProbeRequest) -> PlanShape {
        // The table's name is the only place the id reaches the plan, by its length.
        let key = format!(
            "{}:{}",
            probe.table().len(),
            key_of(&ProbeRequest {
                probe_id: 0,
                ..probe.clone()
            })
        );
        *self
            .shapes
            .entry(key)
            .or_insert_with(|| PlanShape::of(&(self.planner)(probe)))
    }

    /// The checksum of the first `rows` rows `probe`'s generator makes.
    pub fn checksum(&mut self, probe: &ProbeRequest, rows: usize) -> Checksum {
        let key = format!(
            "{}:{}:{}:{}:{rows}",
            probe.columns,
            probe.row_bytes,
            probe.seed,
            key_of(&probe.text)
        );
        *self.checksums.entry(key).or_insert_with(|| {
            let generator =
                RowGenerator::new(probe.columns, probe.row_bytes, probe.seed, probe.text);
            Checksum::expected(&generator, rows)
        })
    }

    /// Distinct expectations computed so far (plan shapes, checksums).
    #[cfg(test)]
    fn computed(&self) -> (usize, usize) {
        (self.shapes.len(), self.checksums.len())
    }
}

/// A value's JSON: every field, so two keys are equal exactly when the values are.
fn key_of(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).expect("a probe always serializes")
}

#[cfg(test)]
mod tests {
    use d1bench_core::{Strategy, TextMix};

    use super::*;

    fn probe(probe_id: u64, strategy: Strategy, columns: usize) -> ProbeRequest {
        ProbeRequest {
            probe_id,
            strategy,
            columns,
            rows: 300,
            row_bytes: 200,
            seed: 3,
            rows_per_statement: None,
            json_payload_bytes: None,
            text: TextMix::HOSTILE,
            indexes: 0,
            debug_corrupt: None,
            debug_slow_percent: None,
        }
    }

    #[test]
    fn each_expectation_equals_the_one_computed_for_that_probe_alone() {
        let mut memo = Expectations::default();
        let mut probes = Vec::new();
        for (id, strategy, columns) in [
            (1, Strategy::Bound, 4),
            (2, Strategy::Literal, 4),
            (3, Strategy::Bound, 4),
            (17, Strategy::Json, 4),
            (9, Strategy::Bound, 5),
            (123, Strategy::Literal, 4),
        ] {
            probes.push(probe(id, strategy, columns));
        }
        for p in &probes {
            for rows in [p.rows, 7] {
                let generator = RowGenerator::new(p.columns, p.row_bytes, p.seed, p.text);
                assert_eq!(memo.checksum(p, rows), Checksum::expected(&generator, rows));
            }
            assert_eq!(
                memo.shape(p),
                PlanShape::of(&sql::plan(p)),
                "probe {}",
                p.probe_id
            );
        }
        // Rows: (4 or 5 columns) × (300 or 7 rows). Shapes: bound/4 at ids 1 and 3 (same
        // name length) is one; literal/4 at ids 2 and 123 are two (the name is longer).
        assert_eq!(memo.computed(), (5, 4));
        let mut other_seed = probe(1, Strategy::Bound, 4);
        other_seed.seed = 4;
        assert_ne!(
            memo.checksum(&other_seed, 300),
            memo.checksum(&probes[0], 300)
        );
    }
}
