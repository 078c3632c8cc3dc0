//! The tests of experiment files: golden errors, the shipped files, every axis expanded.

use super::*;
use crate::paths::project_root;

fn golden_dir() -> PathBuf {
    project_root().join("xtask/tests/bad-experiments")
}

/// Every `bad-experiments/*.toml` fails with exactly the text in its `.err` file.
#[test]
fn bad_experiment_files_fail_with_their_golden_error() {
    let checked = crate::studies::files::check_golden_errors(&golden_dir(), SweepStudy::parse);
    assert!(checked >= 8, "only {checked} golden files");
}

#[test]
fn every_shipped_experiment_parses_and_has_a_smoke_profile() {
    let dir = project_root().join("experiments");
    let names = crate::studies::names(&dir, crate::records::StudyKind::Sweep).unwrap();
    assert!(names.contains(&"column-sweep".to_owned()));
    for name in names {
        let experiment = SweepStudy::load(&dir, &name).unwrap();
        let (_, smoke) = experiment.profile(Some("smoke")).unwrap();
        assert!(!experiment.probes(smoke).is_empty());
        let (_, default) = experiment.profile(None).unwrap();
        assert!(!experiment.probes(default).is_empty());
    }
}

#[test]
fn every_axis_is_a_list_and_every_point_gets_its_warmups_then_its_repeats() {
    let source = r#"
description = "d"
x-axis = "escape-share"
[profile.full]
repeats = 2
warmup = 1
[[profile.full.series]]
strategies = ["bound", "literal"]
columns = [4]
row-bytes = [100]
rows = 10
escape-share = [0, 0.5]
indexes = [2]
[[profile.full.series]]
label = "all non-ASCII"
strategies = ["literal"]
columns = [4]
row-bytes = [100]
rows = 10
escape-share = [1]
non-ascii-share = [1]
"#;
    let experiment = SweepStudy::parse("t", Path::new("t.toml"), source.into()).unwrap();
    let (_, profile) = experiment.profile(None).unwrap();
    let probes = experiment.probes(profile);
    let ids: Vec<u64> = probes.iter().map(|p| p.request.probe_id).collect();
    assert_eq!(ids, (1..=15).collect::<Vec<u64>>());
    // The warm-up round first, then the measured rounds: the order within each round is
    // shuffled (see schedule.rs), so compare each round as a set.
    let round = |probes: &[PlannedProbe]| {
        let mut round: Vec<_> = probes
            .iter()
            .map(|p| {
                (
                    p.warmup,
                    p.repeat,
                    p.request.strategy.name(),
                    p.request.text.escape_share.to_string(),
                    p.request.text.non_ascii_share.to_string(),
                    p.request.indexes,
                    p.label.clone(),
                )
            })
            .collect();
        round.sort();
        round
    };
    let expected = |warmup: bool, repeat: usize| {
        let mut round: Vec<_> = [
            ("bound", "0", "0", 2, ""),
            ("literal", "0", "0", 2, ""),
            ("bound", "0.5", "0", 2, ""),
            ("literal", "0.5", "0", 2, ""),
            ("literal", "1", "1", 0, "all non-ASCII"),
        ]
        .map(|(s, e, n, i, l)| (warmup, repeat, s, e.into(), n.into(), i, l.to_owned()))
        .to_vec();
        round.sort();
        round
    };
    assert_eq!(round(&probes[..5]), expected(true, 0));
    assert_eq!(round(&probes[5..10]), expected(false, 0));
    assert_eq!(round(&probes[10..]), expected(false, 1));
}

#[test]
fn nul_share_is_an_axis_of_its_own_and_defaults_to_none() {
    let source = r#"
description = "d"
x-axis = "nul-share"
[profile.full]
repeats = 1
[[profile.full.series]]
strategies = ["literal"]
columns = [4]
row-bytes = [100]
rows = 10
escape-share = [0.5]
nul-share = [0, 0.25, 1]
"#;
    let experiment = SweepStudy::parse("t", Path::new("t.toml"), source.into()).unwrap();
    let (_, profile) = experiment.profile(None).unwrap();
    // The round's order is shuffled (see schedule.rs): compare it as a set.
    let probes = experiment.probes(profile);
    let mut texts: Vec<(f64, f64)> = probes
        .iter()
        .map(|p| (p.request.text.escape_share, p.request.text.nul_share))
        .collect();
    texts.sort_by(|a, b| a.1.total_cmp(&b.1));
    assert_eq!(texts, [(0.5, 0.0), (0.5, 0.25), (0.5, 1.0)]);
    let quarter = probes
        .iter()
        .find(|p| p.request.text.nul_share == 0.25)
        .unwrap();
    assert_eq!(Axis::NulShare.of_probe(&quarter.request), 0.25);
    // A file without it (every file before it existed) asks for no NUL.
    let old = source.replace("nul-share = [0, 0.25, 1]\n", "");
    let old = old.replace("x-axis = \"nul-share\"", "x-axis = \"escape-share\"");
    let experiment = SweepStudy::parse("t", Path::new("t.toml"), old).unwrap();
    let (_, profile) = experiment.profile(None).unwrap();
    assert!(
        experiment
            .probes(profile)
            .iter()
            .all(|p| p.request.text.nul_share == 0.0)
    );
    let repeated = source.replace("[0, 0.25, 1]", "[0, 1, 1]");
    let err = SweepStudy::parse("t", Path::new("t.toml"), repeated)
        .unwrap_err()
        .to_string();
    assert!(err.contains("`nul-share` lists 1 twice"), "{err}");
}

/// A file of one `full` profile (2 repeats, 1 warm-up) with these series, on `columns`.
fn parse_series(series: &str) -> Result<SweepStudy> {
    let source = format!(
        "description = \"d\"\nx-axis = \"columns\"\n[profile.full]\nrepeats = 2\n\
         warmup = 1\n{series}"
    );
    SweepStudy::parse("t", Path::new("t.toml"), source)
}

#[test]
fn rows_as_small_as_their_columns_allow_parse_and_smaller_ones_do_not() {
    let series = |row_bytes: usize| {
        format!(
            "[[profile.full.series]]\nstrategies = [\"bound\"]\ncolumns = [2, 50]\n\
             row-bytes = [{row_bytes}]\nrows = 10\n"
        )
    };
    parse_series(&series(128)).unwrap();
    let err = parse_series(&series(127)).unwrap_err().to_string();
    assert!(
        err.contains("row-bytes = 127 is below what 50 columns take (at least 128 bytes"),
        "{err}"
    );
}

#[test]
fn repeats_are_refused_wherever_they_hide() {
    let err = parse_series(
        "[[profile.full.series]]\nstrategies = [\"bound\", \"literal\", \"bound\"]\n\
         columns = [8]\nrow-bytes = [100]\nrows = 10\n",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("`strategies` lists \"bound\" twice"), "{err}");
    assert!(err.contains("t.toml:7:35:"), "{err}");
    // The same probes with the lists in another order: not the same text, the same points.
    let err = parse_series(
        "[[profile.full.series]]\nstrategies = [\"bound\"]\ncolumns = [1, 8]\n\
         row-bytes = [100]\nrows = 10\n\
         [[profile.full.series]]\nstrategies = [\"bound\"]\ncolumns = [8, 1]\n\
         row-bytes = [100]\nrows = 10\n",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("this series and series 1 both draw bound at columns = 8 with the same"),
        "{err}"
    );
    // A label tells two series apart even when they run the same probes.
    parse_series(
        "[[profile.full.series]]\nstrategies = [\"bound\"]\ncolumns = [1, 8]\n\
         row-bytes = [100]\nrows = 10\n\
         [[profile.full.series]]\nlabel = \"again\"\nstrategies = [\"bound\"]\n\
         columns = [1, 8]\nrow-bytes = [100]\nrows = 10\n",
    )
    .unwrap();
}

#[test]
fn an_unknown_profile_lists_the_known_ones() {
    let experiment = SweepStudy::load(&project_root().join("experiments"), "column-sweep").unwrap();
    let err = experiment.profile(Some("quick")).unwrap_err().to_string();
    assert!(
        err.contains("no profile `quick`") && err.contains("smoke"),
        "{err}"
    );
}

#[test]
fn the_order_seed_is_a_profile_key_with_a_fixed_default() {
    let source = |seed: &str| {
        format!(
            "description = \"d\"\nx-axis = \"columns\"\n[profile.full]\nrepeats = 3\n{seed}\n\
             [[profile.full.series]]\nstrategies = [\"bound\", \"literal\"]\n\
             columns = [1, 2, 4, 8, 16]\nrow-bytes = [100]\nrows = 10\n"
        )
    };
    let order = |seed: &str| {
        let experiment = SweepStudy::parse("t", Path::new("t.toml"), source(seed)).unwrap();
        let (_, profile) = experiment.profile(None).unwrap();
        let plan = experiment.plan(profile);
        let probes: Vec<_> = experiment
            .probes(profile)
            .iter()
            .map(|p| (p.request.columns, p.request.strategy))
            .collect();
        (plan.order_seed, probes)
    };
    let (default, fixed) = order("");
    assert_eq!(default, 1);
    assert_eq!(order("order-seed = 1").1, fixed);
    let (seven, shuffled) = order("order-seed = 7");
    assert_eq!(seven, 7);
    assert_ne!(shuffled, fixed);
    assert_eq!(shuffled.len(), 5 * 2 * 3);
}

/// A series' `orms` run at each of its points beside its strategies, in the same shuffled
/// rounds: each library's probe carries the point's rows as `batched-rows` without overrides.
#[test]
fn a_series_orms_run_beside_its_strategies_in_every_round() {
    let source = r#"
description = "d"
x-axis = "columns"
[profile.full]
repeats = 2
warmup = 1
[[profile.full.series]]
strategies = ["bound", "literal"]
orms = ["prisma", "drizzle"]
columns = [8, 64]
row-bytes = [1000]
rows = 20
rows-per-statement = 3
"#;
    let experiment = SweepStudy::parse("t", Path::new("t.toml"), source.into()).unwrap();
    assert!(experiment.has_orms());
    let (_, profile) = experiment.profile(None).unwrap();
    let plan = experiment.plan(profile);
    let documented = |orm| OrmWrite {
        orm,
        idiom: Idiom::Documented,
    };
    assert_eq!(
        plan.points[0].orms,
        [documented(Orm::Prisma), documented(Orm::Drizzle)]
    );
    let probes = experiment.probes(profile);
    // 2 points × (2 strategies + 2 libraries) × (1 warm-up + 2 measured) rounds.
    assert_eq!(probes.len(), 2 * 4 * 3);
    for round in probes.chunks(8) {
        let mut libraries: Vec<(usize, Orm)> = round
            .iter()
            .filter_map(|p| Some((p.request.columns, p.orm?.orm)))
            .collect();
        libraries.sort();
        assert_eq!(
            libraries,
            [
                (8, Orm::Drizzle),
                (8, Orm::Prisma),
                (64, Orm::Drizzle),
                (64, Orm::Prisma)
            ],
            "every library at every point, every round"
        );
    }
    for p in probes.iter().filter(|p| p.orm.is_some()) {
        assert_eq!(p.request.strategy, Strategy::BatchedRows);
        assert_eq!(p.request.rows_per_statement, None);
        p.request.validate().unwrap();
    }
    let strategies = probes.iter().filter(|p| p.orm.is_none());
    assert!(
        strategies
            .clone()
            .all(|p| p.request.rows_per_statement == Some(3))
    );
    // Each point's four probes run back to back, so a library pairs with the strategies of
    // its round.
    for four in probes.chunks(4) {
        assert!(four.iter().all(|p| p.point == four[0].point));
    }
}

/// Libraries add their probes to a series' rounds; without them every probe is a strategy's.
#[test]
fn libraries_add_probes_to_each_round() {
    let with = |orms: &str| {
        let source = format!(
            "description = \"d\"\nx-axis = \"columns\"\n[profile.full]\nrepeats = 3\n\
             [[profile.full.series]]\nstrategies = [\"bound\", \"literal\", \"json\"]\n{orms}\
             columns = [1, 2, 4]\nrow-bytes = [100]\nrows = 10\n"
        );
        let experiment = SweepStudy::parse("t", Path::new("t.toml"), source).unwrap();
        let (_, profile) = experiment.profile(None).unwrap();
        experiment.probes(profile)
    };
    let plain = with("");
    assert!(plain.iter().all(|p| p.orm.is_none()));
    assert_eq!(plain.len(), 27);
    let with_kysely = with("orms = [\"kysely\"]\n");
    assert_eq!(with_kysely.len(), 36);
    assert_eq!(
        with_kysely
            .iter()
            .filter(|p| p.orm.map(|o| o.orm) == Some(Orm::Kysely))
            .count(),
        9
    );
}

/// `idioms` asks each library of `orms` with each idiom; without it, the documented one alone.
#[test]
fn idioms_multiply_the_libraries() {
    let source = r#"
description = "d"
x-axis = "columns"
[profile.full]
repeats = 1
[[profile.full.series]]
strategies = ["json"]
orms = ["kysely", "drizzle"]
idioms = ["json-each", "documented"]
columns = [8]
row-bytes = [1000]
rows = 20
"#;
    let experiment = SweepStudy::parse("t", Path::new("t.toml"), source.into()).unwrap();
    let (_, profile) = experiment.profile(None).unwrap();
    let names: Vec<String> = experiment.plan(profile).points[0]
        .orms
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        names,
        ["kysely json-each", "kysely", "drizzle json-each", "drizzle"]
    );
}
