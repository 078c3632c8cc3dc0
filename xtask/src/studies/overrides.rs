//! What `cargo xtask run` may change of an experiment's profile from the command line:
//! `--repeats`, `--warmup`, `--seed`, `--order-seed`, `--sessions`, and `--only` (a filter of the
//! probes by the values of their parameters, as the experiment file writes them). Checked before anything starts, applied to
//! the plan, and recorded in run.toml (`[overrides]`) so the run can be reproduced and resumed.

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use super::sweep::schedule::SweepPlan;
use super::sweep::{Axis, List, MAX_SESSIONS, PlannedProbe, Profile, Sessions, SweepStudy};
use crate::base::text::shell_word;

/// Most measured repeats `--repeats` may ask of every point.
pub const MAX_REPEATS: usize = 1000;
/// Most warm-ups `--warmup` may ask of every point.
pub const MAX_WARMUP: usize = 100;
/// Largest `--seed`: run.toml's integers are 64-bit signed.
pub const MAX_SEED: u64 = i64::MAX as u64;

/// The profile's settings a run replaced, and the filter it ran under; empty when none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Overrides {
    /// Measured repeats of every point, instead of the profile's `repeats`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<usize>,
    /// Warm-ups of every point, instead of the profile's `warmup`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<usize>,
    /// Seed of the row generator, instead of the profile's `seed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Seed of the probes' shuffled order, instead of the profile's `order-seed`: runs that
    /// replay one order share its positions' effects, which no interval over them can see.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_seed: Option<u64>,
    /// Sessions (each a fresh target), instead of the profile's `sessions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<usize>,
    /// `--only` as given: `key=value` conditions, comma-separated, that a probe must all meet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only: Option<String>,
}

impl Overrides {
    pub fn is_empty(&self) -> bool {
        *self == Overrides::default()
    }

    /// Refuses a value out of its range and a malformed filter, naming the flag.
    pub fn check(&self) -> Result<()> {
        if let Some(n) = self.repeats
            && !(1..=MAX_REPEATS).contains(&n)
        {
            bail!(
                "--repeats {n} is out of range: every point needs 1 to {MAX_REPEATS} measured repeats"
            );
        }
        if let Some(n) = self.warmup
            && n > MAX_WARMUP
        {
            bail!("--warmup {n} is out of range: a point takes 0 to {MAX_WARMUP} warm-ups");
        }
        if let Some(n) = self.seed
            && n > MAX_SEED
        {
            bail!(
                "--seed {n} is out of range: a seed is 0 to {MAX_SEED} (run.toml records it as a \
                 64-bit signed integer)"
            );
        }
        if let Some(n) = self.order_seed
            && n > MAX_SEED
        {
            bail!(
                "--order-seed {n} is out of range: a seed is 0 to {MAX_SEED} (run.toml records it \
                 as a 64-bit signed integer)"
            );
        }
        if let Some(n) = self.sessions
            && !(1..=MAX_SESSIONS).contains(&n)
        {
            bail!(
                "--sessions {n} is out of range: a run takes 1 to {MAX_SESSIONS} sessions (each a \
                 fresh target with its own warm-ups and repeats)"
            );
        }
        if let Some(only) = &self.only {
            Filter::parse(only)?;
        }
        Ok(())
    }

    /// The flags that give these overrides, as a command line shows them.
    pub fn command_line(&self) -> String {
        self.args()
            .chunks(2)
            .map(|pair| format!(" {} {}", pair[0], shell_word(&pair[1])))
            .collect()
    }

    /// The same flags as arguments, each flag followed by its value.
    pub fn args(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (flag, value) in [
            ("--repeats", self.repeats.map(|n| n.to_string())),
            ("--warmup", self.warmup.map(|n| n.to_string())),
            ("--seed", self.seed.map(|n| n.to_string())),
            ("--order-seed", self.order_seed.map(|n| n.to_string())),
            ("--sessions", self.sessions.map(|n| n.to_string())),
            ("--only", self.only.clone()),
        ] {
            if let Some(value) = value {
                out.extend([flag.to_owned(), value]);
            }
        }
        out
    }

    /// Whether any of them applies to an experiment only (every one does: ladders have no
    /// repeats, warm-ups, generator seed or parameters to filter).
    pub fn refuse_for_ladders(&self, name: &str) -> Result<()> {
        if !self.is_empty() {
            bail!(
                "--repeats, --warmup, --seed, --order-seed, --sessions and --only apply to \
                 experiments, not to ladders (`{name}` climbs ladders)"
            );
        }
        Ok(())
    }

    /// `profile` with the repeats, warm-ups, seeds and sessions replaced.
    pub fn apply(&self, profile: &Profile) -> Profile {
        let mut profile = profile.clone();
        if let Some(n) = self.repeats.and_then(std::num::NonZeroUsize::new) {
            profile.repeats = toml::Spanned::new(profile.repeats.span(), n);
        }
        if let Some(n) = self.warmup {
            // `--warmup N` is the whole warm-up: N rounds, no warm-up probes.
            profile.warmup = n;
            profile.warmup_probes = 0;
        }
        if let Some(seed) = self.seed {
            profile.seed = seed;
        }
        if let Some(seed) = self.order_seed {
            profile.order_seed = seed;
        }
        if let Some(n) = self.sessions {
            profile.sessions = Sessions(n);
        }
        profile
    }

    /// The plan of `profile` (overrides applied), keeping the points, and the strategies within
    /// each, that `--only` selects; the probes are numbered in the order the plan kept runs
    /// them; a point's libraries (`orms`) stay with it while one of its strategies does. A
    /// filter that keeps no probe is refused, saying which condition matches nothing and
    /// what values its key takes.
    pub fn plan(&self, experiment: &SweepStudy, profile: &Profile) -> Result<SweepPlan> {
        let profile = self.apply(profile);
        let mut plan = experiment.plan(&profile);
        let Some(only) = &self.only else {
            return Ok(plan);
        };
        let filter = Filter::parse(only)?;
        // Each strategy of each point, as one probe of it: what the conditions read.
        let candidates: Vec<PlannedProbe> = plan
            .points
            .iter()
            .enumerate()
            .flat_map(|(index, point)| {
                point.strategies.iter().map(move |&strategy| PlannedProbe {
                    session: 0,
                    point: index,
                    series: point.series,
                    label: point.label.clone(),
                    warmup: false,
                    repeat: 0,
                    orm: None,
                    worker: None,
                    request: point.probe(strategy, 0),
                })
            })
            .collect();
        let meets_all = |p: &PlannedProbe| {
            filter
                .conditions
                .iter()
                .all(|c| c.meets(experiment, &profile, p))
        };
        if !candidates.iter().any(meets_all) {
            for condition in &filter.conditions {
                if !candidates
                    .iter()
                    .any(|p| condition.meets(experiment, &profile, p))
                {
                    let mut values: Vec<String> = Vec::new();
                    for p in &candidates {
                        let value = condition.key.value_of(experiment, &profile, p);
                        if !values.contains(&value) {
                            values.push(value);
                        }
                    }
                    let values: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
                    bail!(
                        "--only {only}: `{}={}` matches no probe of `{}`; there `{}` takes {} \
                         (values as the experiment file writes them)",
                        condition.key.name(),
                        condition.values.join("|"),
                        experiment.name,
                        condition.key.name(),
                        values.join(", ")
                    );
                }
            }
            bail!(
                "--only {only}: each condition matches some probes of `{}`, but no probe meets them \
                 all",
                experiment.name
            )
        }
        let points = std::mem::take(&mut plan.points);
        plan.points = points
            .into_iter()
            .enumerate()
            .filter_map(|(index, mut point)| {
                point.strategies.retain(|strategy| {
                    candidates.iter().any(|p| {
                        p.point == index && p.request.strategy == *strategy && meets_all(p)
                    })
                });
                if point.strategies.is_empty() {
                    return None;
                }
                // The point's request is that of its first strategy.
                point.request.strategy = point.strategies[0];
                Some(point)
            })
            .collect();
        Ok(plan)
    }
}

/// What `--only` can select by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Axis(Axis),
    Strategy,
    Label,
}

const AXES: [Axis; 6] = [
    Axis::Columns,
    Axis::RowBytes,
    Axis::EscapeShare,
    Axis::NulShare,
    Axis::NonAsciiShare,
    Axis::Indexes,
];

impl Key {
    fn all() -> impl Iterator<Item = Key> {
        AXES.into_iter()
            .map(Key::Axis)
            .chain([Key::Strategy, Key::Label])
    }

    fn name(self) -> &'static str {
        match self {
            Key::Axis(axis) => axis.name(),
            Key::Strategy => "strategy",
            Key::Label => "label",
        }
    }

    /// The probe's value of this key as the experiment file writes it: a list value's own text
    /// (`0.50` stays `0.50`), the plain number for a list the file leaves out, the strategy's
    /// name, the series' label (empty without one).
    fn value_of(self, experiment: &SweepStudy, profile: &Profile, probe: &PlannedProbe) -> String {
        let request = &probe.request;
        let Key::Axis(axis) = self else {
            return match self {
                Key::Strategy => request.strategy.name().to_owned(),
                _ => probe.label.clone(),
            };
        };
        let canonical = axis.format(axis.of_probe(request));
        let Some(series) = profile.series.0.get(probe.series) else {
            return canonical;
        };
        let series = series.get_ref();
        let source = experiment.source.as_str();
        let written = match axis {
            Axis::Columns => written(source, &series.columns, |c| c.0 == request.columns),
            Axis::RowBytes => written(source, &series.row_bytes, |b| *b == request.row_bytes),
            Axis::EscapeShare => written(source, &series.escape_share, |s| {
                s.0 == request.text.escape_share
            }),
            Axis::NulShare => written(source, &series.nul_share, |s| s.0 == request.text.nul_share),
            Axis::NonAsciiShare => written(source, &series.non_ascii_share, |s| {
                s.0 == request.text.non_ascii_share
            }),
            Axis::Indexes => written(source, &series.indexes, |i| i.0 == request.indexes),
        };
        written.unwrap_or(canonical)
    }
}

/// The text of the first value of `list` that `is` accepts, where the file wrote one.
fn written<T>(source: &str, list: &List<T>, is: impl Fn(&T) -> bool) -> Option<String> {
    let span = list.0.iter().find(|v| is(v.get_ref()))?.span();
    source
        .get(span)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// One `key=value` of `--only`, or `key=a|b|c`: the probe's value is one of them.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Condition {
    key: Key,
    values: Vec<String>,
}

impl Condition {
    fn meets(&self, experiment: &SweepStudy, profile: &Profile, probe: &PlannedProbe) -> bool {
        let value = self.key.value_of(experiment, profile, probe);
        self.values.contains(&value)
    }
}

/// `--only`: conditions that a probe must all meet.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Filter {
    conditions: Vec<Condition>,
}

impl Filter {
    fn parse(text: &str) -> Result<Filter> {
        let keys = || Key::all().map(Key::name).collect::<Vec<_>>().join(", ");
        let mut conditions = Vec::new();
        for part in text.split(',') {
            let Some((key, value)) = part.split_once('=') else {
                bail!(
                    "--only {text}: `{part}` is not a condition; write key=value, comma-separated \
                     (every condition must hold), with keys {}",
                    keys()
                );
            };
            let (key, value) = (key.trim(), value.trim());
            let Some(key) = Key::all().find(|k| k.name() == key) else {
                bail!(
                    "--only {text}: there is no key `{key}`; the keys are {}",
                    keys()
                );
            };
            let values: Vec<String> = value.split('|').map(|v| v.trim().to_owned()).collect();
            if values.iter().any(String::is_empty) && key != Key::Label {
                bail!(
                    "--only {text}: `{}={value}` gives an empty value; only `label=` may be empty \
                     (the series without a label)",
                    key.name()
                );
            }
            conditions.push(Condition { key, values });
        }
        Ok(Filter { conditions })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const SOURCE: &str = r#"
description = "d"
x-axis = "columns"
[profile.full]
repeats = 2
warmup = 1
[[profile.full.series]]
strategies = ["bound", "literal"]
columns = [4, 8]
row-bytes = [1_000]
rows = 10
escape-share = [0.50]
[[profile.full.series]]
label = "all non-ASCII"
strategies = ["literal"]
columns = [4]
row-bytes = [1_000]
rows = 10
escape-share = [1]
non-ascii-share = [1]
"#;

    fn experiment() -> SweepStudy {
        SweepStudy::parse("t", Path::new("t.toml"), SOURCE.into()).unwrap()
    }

    fn only(filter: &str) -> Overrides {
        Overrides {
            only: Some(filter.into()),
            ..Overrides::default()
        }
    }

    fn probes(overrides: &Overrides) -> Result<Vec<PlannedProbe>> {
        let e = experiment();
        let (_, profile) = e.profile(None).unwrap();
        Ok(overrides.plan(&e, profile)?.probes())
    }

    fn ids(overrides: &Overrides) -> Result<Vec<u64>> {
        Ok(probes(overrides)?
            .iter()
            .map(|p| p.request.probe_id)
            .collect())
    }

    /// What a probe is without its id: series, label, warm-up or repeat, parameters and strategy.
    fn keys<'a>(probes: impl IntoIterator<Item = &'a PlannedProbe>) -> Vec<String> {
        let mut keys: Vec<String> = probes
            .into_iter()
            .map(|p| {
                let request = d1bench_core::ProbeRequest {
                    probe_id: 0,
                    ..p.request.clone()
                };
                format!(
                    "{} {} {} {} {request:?}",
                    p.series, p.label, p.warmup, p.repeat
                )
            })
            .collect();
        keys.sort();
        keys
    }

    #[test]
    fn a_filter_keeps_the_probes_meeting_every_condition_numbered_in_their_plan() {
        let everything = ids(&Overrides::default()).unwrap();
        assert_eq!(everything.len(), 2 * 2 * 3 + 3);
        // Values as the file writes them: `0.50`, `1_000`.
        let kept = probes(&only("columns=8,strategy=literal,escape-share=0.50")).unwrap();
        let e = experiment();
        let (_, profile) = e.profile(None).unwrap();
        let all = e.probes(profile);
        let expected = keys(all.iter().filter(|p| {
            p.request.columns == 8
                && p.request.strategy.name() == "literal"
                && p.request.text.escape_share == 0.5
        }));
        assert_eq!(keys(&kept), expected);
        assert_eq!(kept.len(), 3, "one warm-up and two repeats");
        // The plan kept numbers its probes in the order it runs them.
        let kept_ids: Vec<u64> = kept.iter().map(|p| p.request.probe_id).collect();
        assert_eq!(kept_ids, [1, 2, 3]);
        assert_eq!(ids(&only("row-bytes=1_000")).unwrap(), everything);
        assert_eq!(probes(&only("row-bytes=1_000")).unwrap(), all);
        // A list the file leaves out has its plain value; the label selects a series.
        let labelled = keys(all.iter().filter(|p| p.label == "all non-ASCII"));
        assert_eq!(labelled.len(), 3);
        assert_eq!(keys(&probes(&only("non-ascii-share=1")).unwrap()), labelled);
        assert_eq!(
            keys(&probes(&only("label=all non-ASCII")).unwrap()),
            labelled
        );
        assert_eq!(ids(&only("non-ascii-share=1")).unwrap(), [1, 2, 3]);
        assert_eq!(ids(&only("label=all non-ASCII")).unwrap(), [1, 2, 3]);
        assert_eq!(ids(&only("label=")).unwrap().len(), 12);
        // `a|b` keeps the probes with either value, and only those.
        let either = keys(&probes(&only("columns=4|8,strategy=bound|literal")).unwrap());
        assert_eq!(
            either,
            keys(
                all.iter()
                    .filter(|p| p.request.strategy.name() != "per-row")
            )
        );
        assert_eq!(
            ids(&only("columns=4|99")).unwrap(),
            ids(&only("columns=4")).unwrap()
        );
        // A strategy filter keeps a point's other strategies out of its rounds.
        let plan = {
            let (_, profile) = e.profile(None).unwrap();
            only("strategy=bound").plan(&e, profile).unwrap()
        };
        assert_eq!(plan.points.len(), 2);
        assert!(
            plan.points
                .iter()
                .all(|p| p.strategies.len() == 1 && p.request.strategy.name() == "bound")
        );
    }

    #[test]
    fn a_filter_that_matches_nothing_says_what_its_key_takes() {
        let err = ids(&only("escape-share=0.5")).unwrap_err().to_string();
        assert_eq!(
            err,
            "--only escape-share=0.5: `escape-share=0.5` matches no probe of `t`; there \
             `escape-share` takes \"0.50\", \"1\" (values as the experiment file writes \
             them)"
        );
        let err = ids(&only("row-bytes=1000")).unwrap_err().to_string();
        assert!(err.contains("`row-bytes` takes \"1_000\""), "{err}");
        let err = ids(&only("columns=8,label=all non-ASCII"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("no probe meets them all"), "{err}");
    }

    #[test]
    fn malformed_filters_are_refused_naming_the_part_and_the_keys() {
        let check = |filter: &str| only(filter).check().unwrap_err().to_string();
        let err = check("rows=10");
        assert_eq!(
            err,
            "--only rows=10: there is no key `rows`; the keys are columns, row-bytes, \
             escape-share, nul-share, non-ascii-share, indexes, strategy, label"
        );
        assert!(check("columns").contains("`columns` is not a condition"));
        assert!(check("columns=8,").contains("`` is not a condition"));
        assert!(check("columns=").contains("`columns=` gives an empty value"));
        assert!(check("columns=4|").contains("`columns=4|` gives an empty value"));
        only("strategy=per-row,label=").check().unwrap();
    }

    #[test]
    fn overrides_out_of_range_are_refused_and_in_range_ones_apply() {
        let err = |o: Overrides| o.check().unwrap_err().to_string();
        assert_eq!(
            err(Overrides {
                repeats: Some(0),
                ..Overrides::default()
            }),
            "--repeats 0 is out of range: every point needs 1 to 1000 measured repeats"
        );
        assert!(
            err(Overrides {
                repeats: Some(1001),
                ..Overrides::default()
            })
            .contains("--repeats 1001 is out of range")
        );
        assert_eq!(
            err(Overrides {
                warmup: Some(101),
                ..Overrides::default()
            }),
            "--warmup 101 is out of range: a point takes 0 to 100 warm-ups"
        );
        assert!(
            err(Overrides {
                seed: Some(u64::MAX),
                ..Overrides::default()
            })
            .contains("--seed 18446744073709551615 is out of range")
        );
        for n in [0, 101] {
            assert!(
                err(Overrides {
                    sessions: Some(n),
                    ..Overrides::default()
                })
                .starts_with(&format!(
                    "--sessions {n} is out of range: a run takes 1 to 100"
                ))
            );
        }
        assert!(
            err(Overrides {
                order_seed: Some(u64::MAX),
                ..Overrides::default()
            })
            .contains("--order-seed 18446744073709551615 is out of range")
        );
        let overrides = Overrides {
            repeats: Some(1),
            warmup: Some(0),
            seed: Some(7),
            order_seed: None,
            sessions: None,
            only: Some("strategy=bound".into()),
        };
        overrides.check().unwrap();
        let e = experiment();
        let (_, profile) = e.profile(None).unwrap();
        let probes = overrides.plan(&e, profile).unwrap().probes();
        assert_eq!(probes.len(), 2, "2 columns, 1 repeat");
        assert!(probes.iter().all(|p| !p.warmup && p.request.seed == 7));
        let three = Overrides {
            sessions: Some(3),
            ..overrides
        };
        let probes = three.plan(&e, profile).unwrap().probes();
        assert_eq!(probes.len(), 6, "2 columns, 1 repeat, 3 sessions");
        let sessions: Vec<usize> = probes.iter().map(|p| p.session).collect();
        assert_eq!(sessions, [0, 0, 1, 1, 2, 2]);
    }

    /// `--order-seed` shuffles the same probes into another order, and only the order: the rows'
    /// seed and every point stay.
    #[test]
    fn an_order_seed_reorders_the_same_probes() {
        let e = experiment();
        let (_, profile) = e.profile(None).unwrap();
        let of = |order_seed| {
            let overrides = Overrides {
                repeats: Some(4),
                order_seed,
                ..Overrides::default()
            };
            overrides.check().unwrap();
            overrides
                .plan(&e, profile)
                .unwrap()
                .probes()
                .into_iter()
                .map(|p| (p.request.strategy, p.request.columns, p.request.seed))
                .collect::<Vec<_>>()
        };
        let (one, again, other) = (of(None), of(Some(1)), of(Some(2)));
        assert_eq!(one, again, "the profile's order seed is 1");
        assert_ne!(one, other);
        let sorted = |mut v: Vec<_>| {
            v.sort_by_key(|(s, c, seed): &(d1bench_core::Strategy, usize, u64)| {
                (s.name(), *c, *seed)
            });
            v
        };
        assert_eq!(sorted(one), sorted(other));
    }

    #[test]
    fn the_command_line_gives_back_the_overrides_quoting_what_needs_it() {
        let overrides = Overrides {
            repeats: Some(3),
            warmup: None,
            seed: Some(9),
            order_seed: Some(4),
            sessions: Some(2),
            only: Some("label=all non-ASCII,columns=4".into()),
        };
        assert_eq!(
            overrides.command_line(),
            " --repeats 3 --seed 9 --order-seed 4 --sessions 2 --only 'label=all non-ASCII,columns=4'"
        );
        assert_eq!(
            only("columns=64,strategy=literal").command_line(),
            " --only columns=64,strategy=literal"
        );
        assert_eq!(Overrides::default().command_line(), "");
    }
}
