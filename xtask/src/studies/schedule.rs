//! The order a sweep's probes run in: rounds, each holding one repeat of every point, in an
//! order shuffled anew for every round from the profile's recorded `order-seed`.
//!
//! A fixed order lines slow drift of the machine (a warming disk, a neighbour's build) up with
//! the x axis, where it looks like an effect. Shuffled rounds spread it over every point
//! instead, and over every repeat of each point, so it widens intervals rather than bending
//! lines. Within a round the strategies of one point run back to back, in a shuffled order of
//! their own, so the repeats of two strategies at one point are pairs whose ratio drift cannot
//! move much (see `reports::stats`). Warm-up rounds come first, before any measured one.

use d1bench_core::{ProbeRequest, Strategy};

use super::sweep::PlannedProbe;

/// What a profile asks of a sweep, with its points: how many rounds, in which order.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPlan {
    /// Every point, in the order of the experiment file (series, then its lists).
    pub points: Vec<PlannedPoint>,
    /// Unrecorded repeats of every point before the measured ones.
    pub warmup: usize,
    /// Measured repeats of every point.
    pub repeats: usize,
    /// Seed of the shuffles, recorded in run.toml: the same seed gives the same order.
    pub order_seed: u64,
}

/// One point of a sweep: a series at one set of parameters, with the strategies compared there.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedPoint {
    /// Index of the experiment series it belongs to.
    pub series: usize,
    /// The series' label, empty when it has none.
    pub label: String,
    /// Compared side by side, in each round.
    pub strategies: Vec<Strategy>,
    /// The probe of the first strategy, numbered 0: the parameters every probe of the point
    /// shares.
    pub request: ProbeRequest,
}

impl PlannedPoint {
    /// The point's probe of `strategy`, numbered `probe_id`.
    pub fn probe(&self, strategy: Strategy, probe_id: u64) -> ProbeRequest {
        ProbeRequest {
            probe_id,
            strategy,
            ..self.request.clone()
        }
    }
}

impl SweepPlan {
    /// The rounds of the plan from its first.
    pub fn schedule(&self) -> Schedule<'_> {
        Schedule {
            plan: self,
            rng: fastrand::Rng::with_seed(self.order_seed),
            round: 0,
            next_id: 1,
        }
    }

    /// Every probe the plan sends, in the order it sends them, numbered from 1.
    pub fn probes(&self) -> Vec<PlannedProbe> {
        let mut schedule = self.schedule();
        std::iter::from_fn(|| schedule.next_round())
            .flatten()
            .collect()
    }
}

/// The rounds of a plan, one at a time.
pub struct Schedule<'a> {
    plan: &'a SweepPlan,
    rng: fastrand::Rng,
    /// Rounds handed out so far, warm-ups included.
    round: usize,
    /// The id of the next probe: ids count up in the order probes run.
    next_id: u64,
}

impl Schedule<'_> {
    /// The next round: every point once, points in a shuffled order and each point's
    /// strategies back to back in a shuffled order; warm-up rounds first. `None` when done.
    pub fn next_round(&mut self) -> Option<Vec<PlannedProbe>> {
        let plan = self.plan;
        let round = self.round;
        let warmup = round < plan.warmup;
        if round >= plan.warmup + plan.repeats {
            return None;
        }
        self.round += 1;
        let repeat = if warmup { round } else { round - plan.warmup };
        let mut order: Vec<usize> = (0..plan.points.len()).collect();
        self.rng.shuffle(&mut order);
        let mut probes = Vec::new();
        for index in order {
            let point = &plan.points[index];
            let mut strategies = point.strategies.clone();
            self.rng.shuffle(&mut strategies);
            for strategy in strategies {
                probes.push(PlannedProbe {
                    point: index,
                    series: point.series,
                    label: point.label.clone(),
                    warmup,
                    repeat,
                    request: point.probe(strategy, self.next_id),
                });
                self.next_id += 1;
            }
        }
        Some(probes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use d1bench_core::TextMix;

    fn point(columns: usize, strategies: &[Strategy]) -> PlannedPoint {
        PlannedPoint {
            series: 0,
            label: String::new(),
            strategies: strategies.to_vec(),
            request: ProbeRequest {
                probe_id: 0,
                strategy: strategies[0],
                columns,
                rows: 10,
                row_bytes: 100,
                seed: 1,
                rows_per_statement: None,
                text: TextMix::default(),
                indexes: 0,
                debug_corrupt: None,
            },
        }
    }

    fn plan(order_seed: u64) -> SweepPlan {
        let both = [Strategy::Bound, Strategy::Literal];
        SweepPlan {
            points: [1, 2, 4, 8, 16, 32, 64, 100]
                .map(|c| point(c, &both))
                .to_vec(),
            warmup: 1,
            repeats: 3,
            order_seed,
        }
    }

    /// A probe as (warm-up, repeat, columns, strategy).
    fn key(p: &PlannedProbe) -> (bool, usize, usize, Strategy) {
        (p.warmup, p.repeat, p.request.columns, p.request.strategy)
    }

    #[test]
    fn every_round_holds_every_point_once_with_its_strategies_back_to_back() {
        let plan = plan(1);
        let probes = plan.probes();
        assert_eq!(probes.len(), 8 * 2 * (1 + 3));
        let ids: Vec<u64> = probes.iter().map(|p| p.request.probe_id).collect();
        assert_eq!(
            ids,
            (1..=64).collect::<Vec<u64>>(),
            "ids count up in run order"
        );
        for (round, probes) in probes.chunks(16).enumerate() {
            let (warmup, repeat) = if round == 0 {
                (true, 0)
            } else {
                (false, round - 1)
            };
            assert!(
                probes
                    .iter()
                    .all(|p| (p.warmup, p.repeat) == (warmup, repeat))
            );
            let mut points: Vec<usize> = probes.iter().map(|p| p.point).collect();
            for pair in points.chunks(2) {
                assert_eq!(pair[0], pair[1], "a point's strategies run back to back");
            }
            points.sort();
            points.dedup();
            assert_eq!(points, (0..8).collect::<Vec<_>>());
            for p in probes {
                assert_eq!(p.request.columns, plan.points[p.point].request.columns);
            }
        }
    }

    #[test]
    fn the_order_is_shuffled_per_round_and_the_seed_replays_it() {
        let probes = plan(1).probes();
        let order = |probes: &[PlannedProbe]| -> Vec<(bool, usize, usize, Strategy)> {
            probes.iter().map(key).collect()
        };
        assert_eq!(
            order(&probes),
            order(&plan(1).probes()),
            "same seed, same order"
        );
        assert_ne!(
            order(&probes),
            order(&plan(2).probes()),
            "another seed, another order"
        );
        let columns = |round: usize| -> Vec<usize> {
            probes[round * 16..(round + 1) * 16]
                .iter()
                .map(|p| p.request.columns)
                .collect()
        };
        let rounds: Vec<Vec<usize>> = (0..4).map(columns).collect();
        assert!(
            rounds.windows(2).all(|w| w[0] != w[1]),
            "each round has an order of its own: {rounds:?}"
        );
        let mut sorted = rounds[1].clone();
        sorted.sort();
        assert_ne!(rounds[1], sorted, "not the x axis' order");
        // Over the rounds, bound runs first at some points and second at others.
        let firsts = probes
            .chunks(2)
            .filter(|pair| pair[0].request.strategy == Strategy::Bound)
            .count();
        assert!((8..24).contains(&firsts), "bound first in {firsts} of 32");
    }
}
