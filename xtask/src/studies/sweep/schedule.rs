//! The order a sweep's probes run in: sessions (each a fresh target), each holding its warm-up
//! rounds and its measured rounds, every round one repeat of every point in an order shuffled
//! anew from the session's seed (derived from the profile's recorded `order-seed` and the
//! session's index, [`session_seed`]); and, for a profile that asks for a precision, how many
//! rounds.
//!
//! A fixed order lines slow drift of the machine (a warming disk, a neighbour's build) up with
//! the x axis, where it looks like an effect. Shuffled rounds spread it over every point
//! instead, and over every repeat of each point, so it widens intervals rather than bending
//! lines. Within a round the strategies of one point run back to back, in a shuffled order of
//! their own, so the repeats of two strategies at one point are pairs whose ratio drift cannot
//! move much (see `stats::order`). Warm-up rounds come first in each session, before any
//! measured one.
//!
//! With two Workers in every session (`--paired-workers`), each strategy of a point runs once
//! on each Worker, back to back in a shuffled order of their own: a pair whose ratio the drift
//! between and within sessions cannot move much.
//!
//! Probe ids count up in the order probes run: session 0's first, then session 1's, each
//! session starting after every id the sessions before it may take.
//!
//! A profile with `precision` runs `repeats` rounds, then keeps adding rounds of the points not
//! yet precise enough (the caller says which, [`Schedule::next_round`]) until none is left or
//! `max-repeats` is reached; a point once settled takes no more rounds.

use d1bench_core::{ProbeRequest, Strategy};

use crate::base::{OrmWrite, WorkerKind};

/// What a profile asks of a sweep, with its points: how many rounds, in which order.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPlan {
    /// Every point, in the order of the experiment file (series, then its lists).
    pub points: Vec<PlannedPoint>,
    /// Warm-up probes at the start of every session, before its warm-up rounds: the first this
    /// many probes of one more shuffled round (a few probes to wake a fresh target, rather than
    /// a repeat of every point).
    pub warmup_probes: usize,
    /// Warm-up repeats of every point before the measured ones.
    pub warmup: usize,
    /// Measured repeats of every point; with `until`, the fewest.
    pub repeats: usize,
    /// A precision to repeat the points until, if the profile asks for one.
    pub until: Option<Until>,
    /// Seed of the shuffles, recorded in run.toml: the same seed gives the same order.
    pub order_seed: u64,
    /// Sessions: each a fresh target with its own warm-ups and measured rounds.
    pub sessions: usize,
    /// The Workers every probe runs on, each in turn, within one session (`--paired-workers`:
    /// the Rust Worker and a JavaScript one); empty when a session has one target.
    pub workers: Vec<WorkerKind>,
}

/// The seed of session `session`'s shuffles: the order seed itself for session 0 (so a run of
/// one session keeps the order it had before runs had sessions), and for each later one the
/// order seed plus the session's index times the 64-bit golden ratio, a different stream of
/// the same recorded seed.
pub fn session_seed(order_seed: u64, session: usize) -> u64 {
    order_seed.wrapping_add((session as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Repeat a point until its interval is within `precision` of its median, or it has
/// `max_repeats` repeats.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Until {
    /// Fraction of the median (0.05: the interval within ±5% of it).
    pub precision: f64,
    pub max_repeats: usize,
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
    /// Libraries whose bulk insert runs beside the strategies, in the same rounds.
    pub orms: Vec<OrmWrite>,
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

    /// The point's probe of a library, numbered `probe_id`: its rows handed to the Worker as
    /// single-row statements' values (`batched-rows`, no override of rows per statement), which
    /// the library turns into statements of its own.
    pub fn orm_probe(&self, probe_id: u64) -> ProbeRequest {
        ProbeRequest {
            probe_id,
            strategy: ORM_CARRIER,
            rows_per_statement: None,
            json_payload_bytes: None,
            ..self.request.clone()
        }
    }

    /// What runs at the point in each round: its strategies, then its libraries.
    pub fn methods(&self) -> Vec<Method> {
        let strategies = self.strategies.iter().map(|&s| Method::Strategy(s));
        strategies
            .chain(self.orms.iter().map(|&o| Method::Orm(o)))
            .collect()
    }

    /// The point's probe of `method`, numbered `probe_id`.
    pub fn probe_of(&self, method: Method, probe_id: u64) -> ProbeRequest {
        match method {
            Method::Strategy(strategy) => self.probe(strategy, probe_id),
            Method::Orm(_) => self.orm_probe(probe_id),
        }
    }
}

/// The strategy an ORM probe's request names: its rows reach the Worker as `batched-rows`'
/// single-row statements' values.
pub const ORM_CARRIER: Strategy = Strategy::BatchedRows;

/// What writes a point's rows: one of the six strategies, or a library's bulk insert.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Method {
    Strategy(Strategy),
    Orm(OrmWrite),
}

impl Method {
    /// The library, for a library's probe.
    pub fn orm(self) -> Option<OrmWrite> {
        match self {
            Method::Orm(orm) => Some(orm),
            Method::Strategy(_) => None,
        }
    }
}

impl SweepPlan {
    /// The rounds of session `session` from its first.
    pub fn schedule(&self, session: usize) -> Schedule<'_> {
        Schedule {
            plan: self,
            session,
            rng: fastrand::Rng::with_seed(session_seed(self.order_seed, session)),
            round: 0,
            next_id: 1 + (session * self.most_probes_per_session()) as u64,
            open: vec![true; self.points.len()],
        }
    }

    /// The most probes one session may send, warm-ups included: what its ids are reserved for.
    pub fn most_probes_per_session(&self) -> usize {
        let per_round: usize = self.points.iter().map(|p| p.methods().len()).sum();
        self.warmup_probes + per_round * self.per_method() * (self.warmup + self.max_repeats())
    }

    /// How many probes each method of a point sends per round: one per Worker of a paired
    /// session, else one.
    pub fn per_method(&self) -> usize {
        self.workers.len().max(1)
    }

    /// Rounds a session hands out before its measured ones: the round of warm-up probes, if
    /// any, and the warm-up rounds.
    fn warmup_rounds(&self) -> usize {
        usize::from(self.warmup_probes > 0) + self.warmup
    }

    /// The most measured repeats a point may take.
    pub fn max_repeats(&self) -> usize {
        self.until
            .map_or(self.repeats, |u| u.max_repeats.max(self.repeats))
    }

    /// Every probe the plan sends, session by session in the order it sends them, numbered
    /// from 1; with a precision, every probe it may send (no point ever precise enough).
    pub fn probes(&self) -> Vec<PlannedProbe> {
        (0..self.sessions)
            .flat_map(|session| self.session_probes(session))
            .collect()
    }

    /// Every probe of session `session`, in the order it sends them.
    pub fn session_probes(&self, session: usize) -> Vec<PlannedProbe> {
        let mut schedule = self.schedule(session);
        std::iter::from_fn(|| schedule.next_round(|_| false))
            .flatten()
            .collect()
    }
}

/// The rounds of a plan, one at a time.
pub struct Schedule<'a> {
    plan: &'a SweepPlan,
    /// The session whose rounds these are.
    session: usize,
    rng: fastrand::Rng,
    /// Rounds handed out so far, warm-ups included.
    round: usize,
    /// The id of the next probe: ids count up in the order probes run.
    next_id: u64,
    /// The points still taking rounds.
    open: Vec<bool>,
}

impl Schedule<'_> {
    /// The next round: every open point once, points in a shuffled order and each point's
    /// strategies back to back in a shuffled order; warm-up rounds first. After the profile's
    /// `repeats`, a point for which `settled(index)` holds is closed for good (only asked with a
    /// precision). `None` when done.
    pub fn next_round(
        &mut self,
        mut settled: impl FnMut(usize) -> bool,
    ) -> Option<Vec<PlannedProbe>> {
        let plan = self.plan;
        let round = self.round;
        let warmup = round < plan.warmup_rounds();
        // The warm-up probes' round, when there is one, counts as the warm-ups' repeat 0.
        let repeat = if warmup {
            round
        } else {
            round - plan.warmup_rounds()
        };
        if !warmup && repeat >= plan.max_repeats() {
            return None;
        }
        if !warmup && repeat >= plan.repeats {
            for (index, open) in self.open.iter_mut().enumerate() {
                *open = *open && !settled(index);
            }
        }
        let mut order: Vec<usize> = (0..plan.points.len())
            .filter(|&index| self.open[index])
            .collect();
        if order.is_empty() {
            return None;
        }
        self.round += 1;
        self.rng.shuffle(&mut order);
        // The warm-up probes: the first `warmup_probes` of shuffled rounds, as many as it takes.
        let take = (round == 0 && plan.warmup_probes > 0).then_some(plan.warmup_probes);
        let order: Vec<usize> = match take {
            None => order,
            Some(n) => {
                let per_round: usize = order
                    .iter()
                    .map(|&i| plan.points[i].methods().len() * plan.per_method())
                    .sum();
                let rounds = n.div_ceil(per_round.max(1));
                let mut more = order.clone();
                for _ in 1..rounds {
                    self.rng.shuffle(&mut more);
                    order.extend_from_slice(&more);
                }
                order
            }
        };
        let mut probes = Vec::new();
        for index in order {
            let point = &plan.points[index];
            let mut methods = point.methods();
            self.rng.shuffle(&mut methods);
            for method in methods {
                let mut workers: Vec<Option<WorkerKind>> = match plan.workers.is_empty() {
                    true => vec![None],
                    false => plan.workers.iter().copied().map(Some).collect(),
                };
                if workers.len() > 1 {
                    self.rng.shuffle(&mut workers);
                }
                for worker in workers {
                    probes.push(PlannedProbe {
                        session: self.session,
                        point: index,
                        series: point.series,
                        label: point.label.clone(),
                        warmup,
                        repeat,
                        orm: method.orm(),
                        worker,
                        request: point.probe_of(method, self.next_id),
                    });
                    self.next_id += 1;
                }
            }
        }
        if let Some(n) = take {
            probes.truncate(n);
            // Ids stay consecutive: the ids of what was cut are not taken.
            self.next_id = probes
                .last()
                .map_or(self.next_id, |p| p.request.probe_id + 1);
        }
        Some(probes)
    }
}

/// One probe of a run, with where it sits in the experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedProbe {
    /// The session it runs in, from 0.
    pub session: usize,
    /// Index of its point in [`SweepPlan::points`].
    pub point: usize,
    pub series: usize,
    /// The series' label, empty when it has none.
    pub label: String,
    /// A warm-up probe: sent and reconciled, not recorded as a result.
    pub warmup: bool,
    /// Repetition of the point within its session, from 0 (warm-ups and measured ones counted
    /// apart).
    pub repeat: usize,
    /// The library that writes the rows, for a library's probe (its request names
    /// [`ORM_CARRIER`]).
    pub orm: Option<OrmWrite>,
    /// The Worker it runs on, in a session of two (`--paired-workers`); `None`: the session's.
    pub worker: Option<WorkerKind>,
    pub request: ProbeRequest,
}

impl PlannedProbe {
    /// What writes the probe's rows.
    pub fn method(&self) -> Method {
        match self.orm {
            Some(orm) => Method::Orm(orm),
            None => Method::Strategy(self.request.strategy),
        }
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
            orms: Vec::new(),
            request: ProbeRequest {
                probe_id: 0,
                strategy: strategies[0],
                columns,
                rows: 10,
                row_bytes: 100,
                seed: 1,
                rows_per_statement: None,
                json_payload_bytes: None,
                text: TextMix::default(),
                indexes: 0,
                debug_corrupt: None,
                debug_slow_percent: None,
            },
        }
    }

    fn plan(order_seed: u64) -> SweepPlan {
        let both = [Strategy::Bound, Strategy::Literal];
        SweepPlan {
            points: [1, 2, 4, 8, 16, 32, 64, 100]
                .map(|c| point(c, &both))
                .to_vec(),
            warmup_probes: 0,
            warmup: 1,
            repeats: 3,
            until: None,
            order_seed,
            sessions: 1,
            workers: Vec::new(),
        }
    }

    /// A probe as (warm-up, repeat, columns, strategy).
    fn key(p: &PlannedProbe) -> (bool, usize, usize, Strategy) {
        (p.warmup, p.repeat, p.request.columns, p.request.strategy)
    }

    #[test]
    fn paired_workers_take_each_probe_back_to_back_in_both_orders_and_leave_ids_unique() {
        let one = plan(7);
        let paired = SweepPlan {
            workers: vec![WorkerKind::Rust, WorkerKind::Js],
            ..plan(7)
        };
        let probes = paired.probes();
        assert_eq!(probes.len(), 2 * one.probes().len());
        assert_eq!(
            paired.most_probes_per_session(),
            2 * one.most_probes_per_session()
        );
        let ids: Vec<u64> = probes.iter().map(|p| p.request.probe_id).collect();
        assert_eq!(ids, (1..=probes.len() as u64).collect::<Vec<_>>());
        let mut rust_first = 0;
        for pair in probes.chunks(2) {
            // The same probe but its id, on each Worker once.
            assert_eq!(key(&pair[0]), key(&pair[1]));
            assert_eq!(pair[0].point, pair[1].point);
            let workers = [pair[0].worker, pair[1].worker];
            assert!(workers.contains(&Some(WorkerKind::Rust)));
            assert!(workers.contains(&Some(WorkerKind::Js)));
            rust_first += usize::from(workers[0] == Some(WorkerKind::Rust));
        }
        // Which goes first is shuffled, not fixed.
        assert!(
            rust_first > 0 && rust_first < probes.len() / 2,
            "{rust_first}"
        );
        // A plan of one Worker per session sends the same probes in the same order as before.
        assert!(one.probes().iter().all(|p| p.worker.is_none()));
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

    #[test]
    fn with_a_precision_points_take_rounds_until_settled_or_the_most_repeats() {
        let plan = SweepPlan {
            repeats: 2,
            until: Some(Until {
                precision: 0.05,
                max_repeats: 5,
            }),
            ..plan(1)
        };
        assert_eq!(plan.max_repeats(), 5);
        assert_eq!(plan.probes().len(), 8 * 2 * (1 + 5), "at most");
        // Point 3 settles after 3 repeats, every even point after 2; the odd others never.
        let mut schedule = plan.schedule(0);
        let mut asked = Vec::new();
        let mut rounds = Vec::new();
        while let Some(round) = schedule.next_round(|point| {
            asked.push(point);
            point % 2 == 0 || (point == 3 && asked.len() > 8)
        }) {
            let mut points: Vec<usize> = round.iter().map(|p| p.point).collect();
            points.sort();
            points.dedup();
            rounds.push((round[0].warmup, round[0].repeat, points));
        }
        let all: Vec<usize> = (0..8).collect();
        assert_eq!(
            rounds,
            [
                (true, 0, all.clone()),
                (false, 0, all.clone()),
                (false, 1, all),
                (false, 2, vec![1, 3, 5, 7]),
                (false, 3, vec![1, 5, 7]),
                (false, 4, vec![1, 5, 7]),
            ]
        );
        // Asked only after the fewest repeats, and never again about a closed point.
        assert_eq!(asked[..8], [0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(asked[8..], [1, 3, 5, 7, 1, 5, 7]);
    }

    #[test]
    fn a_round_without_an_open_point_ends_the_plan() {
        let plan = SweepPlan {
            until: Some(Until {
                precision: 0.05,
                max_repeats: 30,
            }),
            ..plan(1)
        };
        let mut schedule = plan.schedule(0);
        let rounds = std::iter::from_fn(|| schedule.next_round(|_| true)).count();
        assert_eq!(
            rounds,
            1 + 3,
            "the warm-up and the fewest repeats, then every point is settled"
        );
    }

    #[test]
    fn each_session_has_its_own_seeded_rounds_and_ids_after_the_sessions_before() {
        let one = plan(1);
        let three = SweepPlan {
            sessions: 3,
            workers: Vec::new(),
            ..plan(1)
        };
        let probes = three.probes();
        assert_eq!(probes.len(), 3 * one.probes().len());
        let ids: Vec<u64> = probes.iter().map(|p| p.request.probe_id).collect();
        assert_eq!(
            ids,
            (1..=3 * 64).collect::<Vec<u64>>(),
            "ids count up over sessions"
        );
        // Session 0 is the plan of one session, probe for probe: older runs replay.
        assert_eq!(three.session_probes(0), one.probes());
        let order = |session: usize| -> Vec<(bool, usize, usize, Strategy)> {
            three.session_probes(session).iter().map(key).collect()
        };
        assert_ne!(order(0), order(1), "another session, another order");
        assert_ne!(order(1), order(2));
        for session in 0..3 {
            let these = three.session_probes(session);
            assert!(these.iter().all(|p| p.session == session));
            assert!(
                these[..16].iter().all(|p| p.warmup),
                "each session warms up first"
            );
            assert!(these[16..].iter().all(|p| !p.warmup));
            // The same seed replays every session.
            assert_eq!(these, three.session_probes(session));
        }
        assert_eq!(session_seed(1, 0), 1);
        assert_ne!(session_seed(1, 1), session_seed(2, 1));
    }

    #[test]
    fn with_a_precision_each_session_reserves_the_ids_it_may_take() {
        let plan = SweepPlan {
            repeats: 2,
            sessions: 2,
            workers: Vec::new(),
            until: Some(Until {
                precision: 0.05,
                max_repeats: 5,
            }),
            ..plan(1)
        };
        assert_eq!(plan.most_probes_per_session(), 16 * (1 + 5));
        let mut schedule = plan.schedule(1);
        let first = schedule.next_round(|_| true).unwrap();
        assert_eq!(first[0].request.probe_id, 1 + 96);
    }
}
