//! `cargo xtask advise --orm`: what a library's usual bulk insert sends D1 for the shape
//! ([`emits`]), which of the six strategies its statements are ([`likeness`]), that strategy's
//! margin to the fastest in the map's cell (the cell's own ranking, so it cannot disagree with
//! the answer above it), and, where the library's `json-each` idiom reaches what the map
//! answers, its code: exactly [`json_each_sample`], which the ORM Worker runs and the e2e ORM
//! test reconciles.

use std::fmt::Write;

use anyhow::Result;
use d1bench_core::Strategy;
use d1bench_core::limits::MAX_STRING_BYTES;

use super::capacity::{Binding, Capacity};
use crate::base::numbers::thousands;
use crate::base::orm::{
    Emitted, Idiom, JSON_EACH_ROWS, Orm, OrmCalls, OrmLimit, emits, json_each_sample,
};
use crate::stats::decide::Evidence;
use crate::studies::sweep::report::decision::{Cell, Stopped};
use crate::studies::sweep::report::verdict::Verdict;

/// The command that measures each library ÷ the fastest strategy, beside the six.
pub const MEASURE_COMMAND: &str = "cargo xtask run orm-sweep --worker js-orm --no-baseline";

/// What `--orm` asks: the library, and the rows it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrmAsk {
    pub orm: Orm,
    pub rows: usize,
}

/// Which of the six strategies a library's statements are, and how they differ from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Likeness {
    pub strategy: Strategy,
    /// The library makes one D1 call per statement where the strategy sends them in one batch.
    pub own_calls: bool,
    /// Rows per statement, the library's then the strategy's, where they differ.
    pub rows: Option<(usize, usize)>,
}

/// The strategy `orm`'s `idiom` sends at `columns` columns. Documented: the `bound` strategy's
/// multi-row INSERTs (chunked to the library's bound-parameter limit); one row a statement, one
/// D1 call each, is `per-row`. `json-each`: the `json` strategy's statement. `strategy_rows` is
/// that strategy's rows per statement at the shape (the planner's).
pub fn likeness(orm: Orm, idiom: Idiom, columns: usize, strategy_rows: usize) -> Likeness {
    let own_calls = orm.calls() != OrmCalls::OneBatch;
    let chunk = emits(orm, idiom, columns, usize::MAX / 2).rows_per_statement;
    let strategy = match idiom {
        Idiom::JsonEach => Strategy::Json,
        Idiom::Documented if chunk == 1 && own_calls => Strategy::PerRow,
        Idiom::Documented => Strategy::Bound,
    };
    Likeness {
        strategy,
        own_calls: own_calls && strategy != Strategy::PerRow,
        rows: (chunk != strategy_rows && strategy != Strategy::PerRow)
            .then_some((chunk, strategy_rows)),
    }
}

/// The library's documented idiom, in a few words.
fn idiom_text(orm: Orm) -> &'static str {
    match orm {
        Orm::Drizzle => {
            "db.insert(t).values(chunk), chunked to D1's 100 bound parameters, the chunks in one \
             db.batch"
        }
        Orm::Prisma => {
            "createMany, which Prisma splits to its D1 adapter's 98 bound values, one D1 call a \
             statement"
        }
        Orm::Kysely => {
            "insertInto(t).values(chunk).execute(), chunked to D1's 100 bound parameters, one D1 \
             call a statement"
        }
    }
}

/// A strategy's place in the map's cell: the fastest, a ratio to the fastest, or no time.
fn margin_text(cell: &Cell, strategy: Strategy) -> String {
    if cell.fastest() == Some(strategy) {
        return "the fastest here".into();
    }
    if let Some((_, e)) = cell.evidence.iter().find(|(s, _)| *s == strategy) {
        let fastest = cell.fastest().map_or("?".into(), |s| s.to_string());
        return format!(
            "{} the fastest's time ({fastest}), 95% interval over {}",
            ratio_text(e),
            e.unit.plural()
        );
    }
    if let Some((_, stopped)) = cell.stopped.iter().find(|(s, _)| *s == strategy) {
        return match stopped {
            Stopped::LeftOut => "no time here: not in the experiment's grid".into(),
            _ => format!("no time here: stopped by {}", stopped.limit()),
        };
    }
    if strategy == Strategy::PerRow {
        return "not in the map (it leaves per-row out: one D1 call a row is never the fastest)"
            .into();
    }
    "not measured here".into()
}

/// `×1.41 (1.20–1.65)`.
fn ratio_text(e: &Evidence) -> String {
    match e.ci95 {
        Some(ci) => format!("×{:.2} ({:.2}–{:.2})", e.center, ci.low, ci.high),
        None => format!("×{:.2}", e.center),
    }
}

/// The strategies the map's answer names: the winner, the equivalent set, or both undecided.
fn answered(verdict: &Verdict) -> Vec<Strategy> {
    match verdict {
        Verdict::NothingRan => Vec::new(),
        Verdict::Only(s) | Verdict::Winner { fastest: s, .. } => vec![*s],
        Verdict::Equivalent { set, .. } => set.clone(),
        Verdict::Undecided {
            fastest, runner_up, ..
        } => vec![*fastest, *runner_up],
    }
}

/// Where a strategy stands in the cell's ranking (the fastest 0), `None` when unranked.
fn rank(cell: &Cell, strategy: Strategy) -> Option<usize> {
    cell.ranked.iter().position(|(s, _)| *s == strategy)
}

/// The cell answered from, named, and where its figures come from.
pub struct MapCell<'c> {
    pub cell: &'c Cell,
    /// `32 columns × 1000 bytes`.
    pub at: String,
    /// `the committed run docs/runs/decision-map (run ...)`.
    pub source: &'c str,
}

/// The `--orm` section of the advice, after the map's answer.
pub fn section(ask: OrmAsk, columns: usize, caps: &[Capacity], map: &MapCell) -> Result<String> {
    let OrmAsk { orm, rows } = ask;
    let cap = |s: Strategy| caps.iter().find(|c| c.strategy == s);
    let sent = emits(orm, Idiom::Documented, columns, rows);
    let mut out = String::new();
    writeln!(
        out,
        "with {orm} ({}), for {} rows:",
        idiom_text(orm),
        thousands(rows)
    )?;
    let refused = sent.refused_by;
    match refused {
        Some(limit) => writeln!(out, "  {}", refusal_text(orm, limit, columns))?,
        None => {
            writeln!(out, "  sends {}; no limit refuses it", sends_text(&sent))?;
            let strategy_rows = cap(Strategy::Bound).map_or(0, |c| c.rows_per_statement);
            let like = likeness(orm, Idiom::Documented, columns, strategy_rows);
            writeln!(out, "  {}", likeness_text(orm, &like, sent.calls))?;
            writeln!(
                out,
                "  {} in the map at {}: {}, from {}",
                like.strategy,
                map.at,
                margin_text(map.cell, like.strategy),
                map.source
            )?;
            writeln!(
                out,
                "  {orm} itself ÷ the fastest: no committed run measures it yet \
                 (`{MEASURE_COMMAND}` does)"
            )?;
        }
    }
    json_each(&mut out, ask, columns, caps, map)?;
    Ok(out)
}

/// `250 statements of 4 rows, 96 bound values each, in 1 D1 call (batch)`.
fn sends_text(sent: &Emitted) -> String {
    let calls = match sent.calls {
        OrmCalls::OneBatch => format!("in {} D1 call ({})", sent.d1_calls, sent.calls.kind()),
        _ => format!(
            "in {} D1 call{} ({}, one a statement)",
            thousands(sent.d1_calls),
            if sent.d1_calls == 1 { "" } else { "s" },
            sent.calls.kind()
        ),
    };
    let (s, r, b) = (
        sent.statements,
        sent.rows_per_statement,
        sent.bound_per_statement,
    );
    let plural =
        |n: usize, word: &str| format!("{} {word}{}", thousands(n), if n == 1 { "" } else { "s" });
    format!(
        "{} of {}, {} each, {calls}",
        plural(s, "statement"),
        plural(r, "row"),
        plural(b, "bound value")
    )
}

/// What the refusal means for the library at this shape.
fn refusal_text(orm: Orm, limit: OrmLimit, columns: usize) -> String {
    match limit {
        OrmLimit::PrismaMaxBindValues => format!(
            "refused: one row of {columns} columns binds {columns} values, past {}; Prisma \
             refuses it before sending anything to D1 (\"The query parameter limit supported by \
             your database is exceeded.\"), so {orm} writes nothing at this shape, though D1 \
             would take the row",
            limit.prose()
        ),
        OrmLimit::D1BoundParameters => format!(
            "refused: one row of {columns} columns binds {columns} values, past {}: D1 refuses \
             the statement and {orm} writes nothing at this shape",
            limit.prose()
        ),
    }
}

/// Which strategy the library's statements are, and what differs from it.
fn likeness_text(orm: Orm, like: &Likeness, calls: OrmCalls) -> String {
    let s = like.strategy;
    let mut text = match s {
        Strategy::PerRow => format!(
            "that is the `{s}` strategy: one single-row statement a D1 call ({})",
            calls.kind()
        ),
        _ => format!("its statements are the `{s}` strategy's"),
    };
    if let Some((own, strategy)) = like.rows {
        write!(
            text,
            ", at {own} rows a statement where `{s}` puts {strategy}"
        )
        .ok();
    }
    if like.own_calls {
        write!(
            text,
            ", but {orm} sends each in its own D1 call ({}) where `{s}` sends them all in one \
             batch: the map's time for `{s}` does not count those calls",
            calls.kind()
        )
        .ok();
    } else if s != Strategy::PerRow && like.rows.is_none() {
        write!(text, ", sent as it sends them (one batch): {orm} is `{s}`").ok();
    } else if s != Strategy::PerRow {
        write!(text, ", sent as it sends them, in one batch").ok();
    }
    text
}

/// The library's `json-each` sample, when it reaches what the map answers (or the fastest
/// ahead of the library's own strategy, or the row its documented idiom is refused), and the
/// json statement of 500 rows fits D1's limits at this row size.
fn json_each(
    out: &mut String,
    ask: OrmAsk,
    columns: usize,
    caps: &[Capacity],
    map: &MapCell,
) -> Result<()> {
    let OrmAsk { orm, rows } = ask;
    let cell = map.cell;
    let json = Strategy::Json;
    let documented = emits(orm, Idiom::Documented, columns, rows);
    let own = likeness(orm, Idiom::Documented, columns, 0).strategy;
    let why = if answered(&cell.verdict).contains(&json) {
        format!("the map's answer, {}, includes json", cell.answer())
    } else if documented.refused_by.is_some() {
        format!(
            "{orm}'s raw-SQL API binds one value a statement, so no parameter limit refuses the row"
        )
    } else if rank(cell, json).is_some_and(|j| rank(cell, own).is_none_or(|o| j < o)) {
        format!(
            "the map's answer, {}, is not one a tested {orm} idiom writes; json, which one does, \
             is ahead of {own} in the cell's ranking",
            cell.answer()
        )
    } else {
        writeln!(
            out,
            "  no other idiom of {orm} that the tests run gets nearer the map's answer, {}, here \
             (its json-each ranks behind {own})",
            cell.answer()
        )?;
        return Ok(());
    };
    let fits = caps.iter().find(|c| c.strategy == json).is_some_and(|c| {
        !matches!(c.binding, Binding::Wall(_)) && c.rows_per_statement >= JSON_EACH_ROWS.min(rows)
    });
    if !fits {
        writeln!(
            out,
            "  {why}, but {orm}'s json-each idiom sends {JSON_EACH_ROWS} rows a statement, whose \
             JSON passes D1's {}-byte strings at this row size: no sample",
            thousands(MAX_STRING_BYTES)
        )?;
        return Ok(());
    }
    let sent = emits(orm, Idiom::JsonEach, columns, rows);
    let json_rows = caps
        .iter()
        .find(|c| c.strategy == json)
        .map_or(0, |c| c.rows_per_statement);
    let like = likeness(orm, Idiom::JsonEach, columns, json_rows);
    writeln!(out, "instead: {why}")?;
    writeln!(
        out,
        "  json in the map at {}: {}",
        map.at,
        margin_text(cell, json)
    )?;
    writeln!(out, "  {}", likeness_text(orm, &like, sent.calls))?;
    writeln!(
        out,
        "  this {orm} code writes the `json` strategy's statement, and sends {}:",
        sends_text(&sent)
    )?;
    let sample = json_each_sample(orm);
    writeln!(out, "```js\n{sample}```")?;
    let helpers = if sample.contains("jsonEachInsert") {
        "jsonChunks and jsonEachInsert as worker-orm/src/orms.js defines them"
    } else {
        "jsonChunks as worker-orm/src/orms.js defines it"
    };
    writeln!(
        out,
        "  ({helpers}; the ORM sweep runs this code against local D1 and reconciles its rows)"
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{Shape, advice, capacity::capacities, committed};
    use super::*;
    use crate::paths::project_root;

    /// The advice with `--orm` at `columns` × `row_bytes` from the committed map.
    fn advise(orm: Orm, columns: usize, row_bytes: usize) -> String {
        let (source, maps) = committed(&project_root()).unwrap();
        let shape = Shape {
            columns,
            row_bytes,
            from: "--columns".into(),
        };
        let ask = OrmAsk { orm, rows: 1000 };
        advice(&shape, &maps, maps[0].target, &source, Some(ask)).unwrap()
    }

    fn bound_rows(columns: usize) -> usize {
        capacities(columns, 2000)
            .iter()
            .find(|c| c.strategy == Strategy::Bound)
            .unwrap()
            .rows_per_statement
    }

    #[test]
    fn drizzle_is_bound_and_its_json_each_sample_is_printed_whole() {
        let like = likeness(Orm::Drizzle, Idiom::Documented, 24, bound_rows(24));
        assert_eq!(
            like,
            Likeness {
                strategy: Strategy::Bound,
                own_calls: false,
                rows: None
            }
        );
        let text = advise(Orm::Drizzle, 24, 2000);
        for line in [
            "  sends 250 statements of 4 rows, 96 bound values each, in 1 D1 call (batch); no \
             limit refuses it",
            "drizzle is `bound`",
            "  bound in the map at 32 columns × 1000 bytes: ×",
            "no committed run measures it yet (`cargo xtask run orm-sweep --worker js-orm",
        ] {
            assert!(text.contains(line), "no `{line}` in {text}");
        }
        let block = format!("```js\n{}```\n", json_each_sample(Orm::Drizzle));
        assert!(text.contains(&block), "{text}");
    }

    #[test]
    fn kysely_is_bounds_statements_one_call_each_and_per_row_at_one_row_a_statement() {
        let like = likeness(Orm::Kysely, Idiom::Documented, 24, bound_rows(24));
        assert_eq!(
            (like.strategy, like.own_calls, like.rows),
            (Strategy::Bound, true, None)
        );
        let text = advise(Orm::Kysely, 24, 2000);
        assert!(
            text.contains("in 250 D1 calls (all, one a statement)")
                && text.contains("the map's time for `bound` does not count those calls"),
            "{text}"
        );
        // Past 50 columns a chunk is one row, each its own call: per-row.
        let wide = likeness(Orm::Kysely, Idiom::Documented, 64, bound_rows(64));
        assert_eq!((wide.strategy, wide.own_calls), (Strategy::PerRow, false));
        // Its json-each: json's statement, one call each.
        let json = likeness(Orm::Kysely, Idiom::JsonEach, 24, 941);
        assert_eq!(
            (json.strategy, json.own_calls, json.rows),
            (Strategy::Json, true, Some((JSON_EACH_ROWS, 941)))
        );
    }

    #[test]
    fn prisma_chunks_to_98_and_refuses_99_and_100_columns_before_sending() {
        // 33 columns: 98 / 33 = 2 rows where bound puts 100 / 33 = 3.
        let like = likeness(Orm::Prisma, Idiom::Documented, 33, bound_rows(33));
        assert_eq!(
            (like.strategy, like.own_calls, like.rows),
            (Strategy::Bound, true, Some((2, 3)))
        );
        assert_eq!(
            likeness(Orm::Prisma, Idiom::Documented, 50, bound_rows(50)).strategy,
            Strategy::PerRow
        );
        for columns in [99, 100] {
            let text = advise(Orm::Prisma, columns, 2000);
            assert!(
                text.contains(&format!(
                    "  refused: one row of {columns} columns binds {columns} values, past \
                     Prisma's own 98 bound values"
                )) && text.contains("before sending anything to D1"),
                "{text}"
            );
            assert!(
                !text.contains("  sends "),
                "a refused write sends nothing: {text}"
            );
            let block = format!("```js\n{}```\n", json_each_sample(Orm::Prisma));
            assert!(text.contains(&block), "{text}");
        }
    }
}
