//! The libraries users write to D1 with, measured beside the six strategies by the ORM Worker
//! (`worker-orm/`): their names, what each emits for a probe's shape ([`emits`], the model the
//! measured `sent` is held against and the facts `advise` states), and the Prisma schema their
//! client is generated from ([`prisma_schema`]).

use std::fmt;
use std::str::FromStr;

use d1bench_core::generate::{ColumnType, column_type};

/// A library that writes a probe's rows with its own bulk-insert idiom.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Orm {
    /// drizzle-orm's D1 driver: `db.insert(t).values(chunk)`, chunks of floor(100 / C) rows,
    /// all in one `db.batch([...])`.
    Drizzle,
    /// Prisma 7 with `@prisma/adapter-d1`: `createMany`, which Prisma splits itself.
    Prisma,
    /// Kysely with `kysely-d1`: `insertInto(t).values(chunk).execute()`, the same chunks, one
    /// after the other.
    Kysely,
}

impl Orm {
    pub const ALL: [Orm; 3] = [Orm::Drizzle, Orm::Prisma, Orm::Kysely];

    pub fn name(self) -> &'static str {
        match self {
            Orm::Drizzle => "drizzle",
            Orm::Prisma => "prisma",
            Orm::Kysely => "kysely",
        }
    }

    /// Most values the library puts in one statement: D1's documented 100 bound parameters for
    /// the chunks users write (drizzle, kysely); Prisma's D1 adapter declares 98
    /// (`maxBindValues`) and splits `createMany` to it.
    pub fn bound_parameters_per_statement(self) -> usize {
        match self {
            Orm::Drizzle | Orm::Kysely => D1_MAX_BOUND_PARAMETERS,
            Orm::Prisma => PRISMA_D1_MAX_BIND_VALUES,
        }
    }

    /// How the library hands its statements to D1.
    pub fn calls(self) -> OrmCalls {
        match self {
            Orm::Drizzle => OrmCalls::OneBatch,
            Orm::Prisma => OrmCalls::RunPerStatement,
            Orm::Kysely => OrmCalls::AllPerStatement,
        }
    }
}

impl fmt::Display for Orm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Orm {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Orm::ALL.into_iter().find(|o| o.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Orm::ALL.iter().map(|o| o.name()).collect();
            format!("unknown ORM `{s}`; expected one of: {}", names.join(", "))
        })
    }
}

/// How a library is asked to write the rows.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Idiom {
    /// The bulk insert its documentation and its users give ([`Orm`]'s variants say which).
    Documented,
    /// The library's own raw-SQL API sending the `json` strategy's statement, `INSERT INTO t
    /// (c0, ...) SELECT value->>0, ... FROM json_each(?)`, [`JSON_EACH_ROWS`] rows a statement as
    /// one bound JSON array: drizzle `db.insert(t).select(sql...)` in one `db.batch`, Kysely
    /// `sql...execute(db)` and Prisma `$executeRawUnsafe(text, json)` one call each.
    JsonEach,
}

impl Idiom {
    pub fn name(self) -> &'static str {
        match self {
            Idiom::Documented => "documented",
            Idiom::JsonEach => "json-each",
        }
    }
}

/// Rows a `json-each` statement carries: its JSON stays under D1's 2 MB a string for rows up
/// to about 4 KB.
pub const JSON_EACH_ROWS: usize = 500;

/// What an ORM probe runs: a library, asked with one idiom.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OrmWrite {
    pub orm: Orm,
    pub idiom: Idiom,
}

impl fmt::Display for OrmWrite {
    /// `drizzle`, or `drizzle json-each` for another idiom than the documented one.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.idiom {
            Idiom::Documented => write!(f, "{}", self.orm),
            other => write!(f, "{} {}", self.orm, other.name()),
        }
    }
}

/// D1's documented most bound parameters of one statement.
pub const D1_MAX_BOUND_PARAMETERS: usize = d1bench_core::limits::MAX_BOUND_PARAMETERS;
/// `MAX_BIND_VALUES` of `@prisma/adapter-d1` 7.10.0, which Prisma's `createMany` splits to.
pub const PRISMA_D1_MAX_BIND_VALUES: usize = 98;

/// How a library's statements reach D1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrmCalls {
    /// All statements in one `db.batch()` (one D1 call).
    OneBatch,
    /// One `.run()` per statement (one D1 call each).
    RunPerStatement,
    /// One `.all()` per statement (one D1 call each).
    AllPerStatement,
}

impl OrmCalls {
    /// The D1 call's name as the ORM Worker counts it.
    pub fn kind(self) -> &'static str {
        match self {
            OrmCalls::OneBatch => "batch",
            OrmCalls::RunPerStatement => "run",
            OrmCalls::AllPerStatement => "all",
        }
    }
}

/// What a library sends D1 for `rows` rows of `columns` columns ([`emits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Emitted {
    /// INSERT statements.
    pub statements: usize,
    /// Rows in the largest INSERT.
    pub rows_per_statement: usize,
    /// Values the largest INSERT binds.
    pub bound_per_statement: usize,
    /// D1 calls (a batch is one).
    pub d1_calls: usize,
    /// How the calls are made.
    pub calls: OrmCalls,
    /// The limit that refuses a row of this many columns, when one does: the library writes
    /// nothing.
    pub refused_by: Option<OrmLimit>,
}

/// A bound-parameter limit that stops a library's insert.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrmLimit {
    /// D1 refuses a statement that binds more than 100 values: a row of more than 100 columns.
    D1BoundParameters,
    /// Prisma refuses before sending a row whose values alone pass its D1 adapter's 98
    /// (`The query parameter limit supported by your database is exceeded.`): a row of 99 or
    /// 100 columns, which D1 itself would take.
    PrismaMaxBindValues,
}

impl OrmLimit {
    /// The limit in a sentence's words.
    pub fn prose(self) -> &'static str {
        match self {
            OrmLimit::D1BoundParameters => "D1's 100 bound parameters a statement",
            OrmLimit::PrismaMaxBindValues => {
                "Prisma's own 98 bound values a statement (@prisma/adapter-d1's maxBindValues)"
            }
        }
    }
}

/// What `orm` emits with `idiom` for `rows` rows of `columns` columns. Documented: its rows
/// per statement are set by the bound-parameter limit it chunks to
/// ([`Orm::bound_parameters_per_statement`]), at least one row; `json-each`: [`JSON_EACH_ROWS`]
/// rows a statement, one bound value. Its D1 calls by how it hands statements over
/// ([`Orm::calls`]). Pure: the measured `sent` of every ORM probe is held against it.
pub fn emits(orm: Orm, idiom: Idiom, columns: usize, rows: usize) -> Emitted {
    let columns = columns.max(1);
    let chunk = match idiom {
        Idiom::Documented => (orm.bound_parameters_per_statement() / columns).max(1),
        Idiom::JsonEach => JSON_EACH_ROWS,
    };
    let rows_per_statement = chunk.min(rows);
    let statements = rows.div_ceil(chunk);
    let calls = orm.calls();
    Emitted {
        statements,
        rows_per_statement,
        bound_per_statement: match idiom {
            Idiom::Documented => rows_per_statement * columns,
            Idiom::JsonEach => usize::from(statements > 0),
        },
        d1_calls: match calls {
            OrmCalls::OneBatch => usize::from(statements > 0),
            OrmCalls::RunPerStatement | OrmCalls::AllPerStatement => statements,
        },
        calls,
        refused_by: if idiom == Idiom::JsonEach {
            None
        } else if columns > D1_MAX_BOUND_PARAMETERS {
            Some(OrmLimit::D1BoundParameters)
        } else if orm == Orm::Prisma && columns > PRISMA_D1_MAX_BIND_VALUES {
            Some(OrmLimit::PrismaMaxBindValues)
        } else {
            None
        },
    }
}

/// What a library sent D1 for one probe, as the ORM Worker's counting wrapper of the binding saw
/// it (`worker-orm/src/counting.js`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sent {
    /// INSERT statements D1 answered or failed.
    pub statements: usize,
    /// Statements besides the INSERTs (none seen so far).
    pub other_statements: usize,
    /// Rows D1 said the INSERTs changed (`meta.changes`), summed.
    pub rows: usize,
    /// Rows D1 said the largest INSERT changed.
    pub rows_per_statement: usize,
    /// Values bound over every INSERT.
    pub bound_values: usize,
    /// Values the INSERT with the most bound.
    pub bound_per_statement: usize,
    /// D1 calls by the binding's method: `batch`, `run`, `all`, `raw`, `first`, `exec`.
    pub calls: std::collections::BTreeMap<String, usize>,
}

impl Sent {
    /// D1 calls of every kind.
    pub fn d1_calls(&self) -> usize {
        self.calls.values().sum()
    }

    /// The calls made, as results.csv keeps them: `batch 1`, `all 42`, `run 41 batch 1`.
    pub fn call_kinds(&self) -> String {
        let made: Vec<String> = (self.calls.iter())
            .filter(|(_, n)| **n > 0)
            .map(|(kind, n)| format!("{kind} {n}"))
            .collect();
        made.join(" ")
    }

    /// How what was sent differs from what [`emits`] says `write` sends for `columns` × `rows`
    /// (after a failure the statements stop early: only a successful write is held to it).
    pub fn unlike(&self, write: OrmWrite, columns: usize, rows: usize) -> Option<String> {
        let model = emits(write.orm, write.idiom, columns, rows);
        let orm = write;
        let mut problems = Vec::new();
        for (what, expected, got) in [
            ("statements", model.statements, self.statements),
            (
                "rows per statement",
                model.rows_per_statement,
                self.rows_per_statement,
            ),
            (
                "bound values per statement",
                model.bound_per_statement,
                self.bound_per_statement,
            ),
            ("D1 calls", model.d1_calls, self.d1_calls()),
            ("other statements", 0, self.other_statements),
        ] {
            if expected != got {
                problems.push(format!(
                    "{what}: {orm} is modelled to send {expected}, it sent {got}"
                ));
            }
        }
        let kind = self.calls.get(model.calls.kind()).copied().unwrap_or(0);
        if kind != model.d1_calls {
            problems.push(format!(
                "{orm} is modelled to call `{}` {} times, it did {kind}",
                model.calls.kind(),
                model.d1_calls
            ));
        }
        (!problems.is_empty()).then(|| problems.join("; "))
    }
}

/// The helper every `json-each` sample uses: the rows (objects) as JSON arrays of arrays, in
/// the columns' order, [`JSON_EACH_ROWS`] rows each.
pub const JSON_CHUNKS_SAMPLE: &str = "\
const JSON_EACH_ROWS = 500;
function jsonChunks(rows, names) {
  return chunks(rows, JSON_EACH_ROWS).map((chunk) =>
    JSON.stringify(chunk.map((row) => names.map((name) => row[name]))),
  );
}
";

/// The code that gets `orm` the json strategy's statements (`json-each`): one statement per
/// 500 rows binding one JSON array, through the library's own API. Every line of it (and of
/// [`JSON_CHUNKS_SAMPLE`]) is a line of `worker-orm/src/orms.js`, which the ORM sweep runs and
/// reconciles against local D1 (a test holds the two together); `table`, `names` (the column
/// names), `t` (drizzle's table), `orm` (the library's client) and `rows` are the caller's.
pub fn json_each_sample(orm: Orm) -> &'static str {
    match orm {
        Orm::Drizzle => "\
// drizzle-orm 0.45.4: import { sql as drizzleSql } from \"drizzle-orm\";
const select = `SELECT ${names.map((_, j) => `value->>${j}`).join(\", \")} FROM json_each(`;
const inserts = jsonChunks(rows, names).map((json) =>
  orm.insert(t).select(drizzleSql`${drizzleSql.raw(select)}${json})`),
);
await orm.batch(inserts);
",
        Orm::Kysely => "\
// kysely 0.29.9 with kysely-d1 0.4.0: import { sql as kyselySql } from \"kysely\";
const [before, after] = jsonEachInsert(table, names).split(\"?\");
for (const json of jsonChunks(rows, names)) {
  await kyselySql`${kyselySql.raw(before)}${json}${kyselySql.raw(after)}`.execute(orm);
}
",
        Orm::Prisma => "\
// Prisma 7.10 with @prisma/adapter-d1 7.10.0 (prisma = new PrismaClient({ adapter: new PrismaD1(env.DB) })):
const text = jsonEachInsert(table, names);
for (const json of jsonChunks(rows, names)) {
  await prisma.$executeRawUnsafe(text, json);
}
",
    }
}

/// The `json` strategy's statement text, as every sample builds it.
pub const JSON_EACH_INSERT_SAMPLE: &str = "\
function jsonEachInsert(table, names) {
  const values = names.map((_, j) => `value->>${j}`).join(\", \");
  return `INSERT INTO ${table} (${names.join(\", \")}) SELECT ${values} FROM json_each(?)`;
}
";

/// Most columns the Prisma schema has a model for: D1's documented most columns of a table.
pub const PRISMA_MAX_COLUMNS: usize = 100;

/// `worker-orm/prisma/schema.prisma`: one model `C<n>` for every column count up to
/// [`PRISMA_MAX_COLUMNS`], with the probe table's columns (`c0`, `c1`, ... typed as the
/// generator types them), mapped to the table `prisma_c<n>`. Prisma needs an identifier on
/// every model: `c0` is declared one, which the table (without a key) does not enforce and an
/// insert does not need.
pub fn prisma_schema() -> String {
    let mut out = String::from(
        "// Generated by the xtask (xtask/src/base/orm.rs, `prisma_schema`): a test keeps it in step.\n\
         // One model per column count with the probe table's columns, mapped to `prisma_c<C>`.\n\
         generator client {\n  provider = \"prisma-client\"\n  output   = \"../generated/prisma\"\n  \
         runtime  = \"cloudflare\"\n}\n\ndatasource db {\n  provider = \"sqlite\"\n}\n",
    );
    for columns in 1..=PRISMA_MAX_COLUMNS {
        out.push_str(&format!("\nmodel C{columns} {{\n"));
        for j in 0..columns {
            let kind = match column_type(j) {
                ColumnType::Integer => "Int",
                ColumnType::Text => "String",
            };
            let id = if j == 0 { " @id" } else { "" };
            out.push_str(&format!("  c{j} {kind}{id}\n"));
        }
        out.push_str(&format!("\n  @@map(\"prisma_c{columns}\")\n}}\n"));
    }
    out
}

/// The probe table's columns as the ORM Worker describes them to a library: each name with
/// `text` or `integer`.
pub fn table_columns(columns: usize) -> Vec<(String, &'static str)> {
    (0..columns)
        .map(|j| {
            let kind = match column_type(j) {
                ColumnType::Integer => "integer",
                ColumnType::Text => "text",
            };
            (format!("c{j}"), kind)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_an_unknown_one_lists_the_known() {
        for orm in Orm::ALL {
            assert_eq!(orm.name().parse::<Orm>(), Ok(orm));
        }
        assert_eq!(
            "typeorm".parse::<Orm>(),
            Err("unknown ORM `typeorm`; expected one of: drizzle, prisma, kysely".into())
        );
    }

    #[test]
    fn drizzle_and_kysely_chunk_to_d1s_100_parameters_prisma_to_its_adapters_98() {
        let d = emits(Orm::Drizzle, Idiom::Documented, 8, 500);
        assert_eq!(
            (d.rows_per_statement, d.statements, d.d1_calls),
            (12, 42, 1)
        );
        assert_eq!(d.bound_per_statement, 96);
        let k = emits(Orm::Kysely, Idiom::Documented, 8, 500);
        assert_eq!(
            (k.rows_per_statement, k.statements, k.d1_calls),
            (12, 42, 42)
        );
        let p = emits(Orm::Prisma, Idiom::Documented, 8, 500);
        assert_eq!(
            (p.rows_per_statement, p.statements, p.d1_calls),
            (12, 42, 42)
        );
        // One column: 100 rows a statement for the chunkers, 98 for Prisma.
        assert_eq!(emits(Orm::Drizzle, Idiom::Documented, 1, 500).statements, 5);
        assert_eq!(
            emits(Orm::Prisma, Idiom::Documented, 1, 500).rows_per_statement,
            98
        );
        assert_eq!(emits(Orm::Prisma, Idiom::Documented, 1, 500).statements, 6);
        // 50 columns: two rows for drizzle, one for Prisma (2 × 50 = 100 > 98).
        assert_eq!(
            emits(Orm::Drizzle, Idiom::Documented, 50, 10).rows_per_statement,
            2
        );
        assert_eq!(
            emits(Orm::Prisma, Idiom::Documented, 50, 10).rows_per_statement,
            1
        );
    }

    #[test]
    fn past_the_limit_one_row_a_statement_and_past_the_limit_of_a_row_refused() {
        let d = emits(Orm::Drizzle, Idiom::Documented, 100, 7);
        assert_eq!(
            (d.rows_per_statement, d.statements, d.refused_by),
            (1, 7, None)
        );
        let p = emits(Orm::Prisma, Idiom::Documented, 98, 7);
        assert_eq!(
            (p.rows_per_statement, p.statements, p.refused_by),
            (1, 7, None)
        );
        assert_eq!(
            emits(Orm::Prisma, Idiom::Documented, 99, 7).refused_by,
            Some(OrmLimit::PrismaMaxBindValues)
        );
        assert_eq!(
            emits(Orm::Kysely, Idiom::Documented, 101, 7).refused_by,
            Some(OrmLimit::D1BoundParameters)
        );
        assert_eq!(
            emits(Orm::Drizzle, Idiom::Documented, 4, 3).rows_per_statement,
            3,
            "fewer rows than a chunk"
        );
        assert_eq!(emits(Orm::Drizzle, Idiom::Documented, 4, 0).d1_calls, 0);
    }

    #[test]
    fn json_each_sends_500_rows_a_statement_with_one_value_bound() {
        let d = emits(Orm::Drizzle, Idiom::JsonEach, 100, 5000);
        assert_eq!(
            (d.statements, d.rows_per_statement, d.bound_per_statement),
            (10, 500, 1)
        );
        assert_eq!((d.d1_calls, d.refused_by), (1, None));
        let p = emits(Orm::Prisma, Idiom::JsonEach, 100, 1200);
        assert_eq!((p.statements, p.d1_calls, p.refused_by), (3, 3, None));
        let write = OrmWrite {
            orm: Orm::Kysely,
            idiom: Idiom::JsonEach,
        };
        assert_eq!(write.to_string(), "kysely json-each");
    }

    /// What advise prints is what the ORM sweep runs: every line of every sample is a line of
    /// `worker-orm/src/orms.js` (its `json-each` idioms, run against local D1 and reconciled by
    /// the e2e test `orms::orm_sweep_smoke_reconciles_every_library_probe`).
    #[test]
    fn every_sample_line_is_a_line_the_orm_worker_runs() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap();
        let worker = std::fs::read_to_string(root.join("worker-orm/src/orms.js")).unwrap();
        let lines: std::collections::HashSet<&str> = worker.lines().map(str::trim).collect();
        for orm in Orm::ALL {
            let code = [
                json_each_sample(orm),
                JSON_CHUNKS_SAMPLE,
                JSON_EACH_INSERT_SAMPLE,
            ];
            for line in code.iter().flat_map(|c| c.lines()).map(str::trim) {
                if line.starts_with("//") || line == "const JSON_EACH_ROWS = 500;" {
                    continue;
                }
                assert!(
                    lines.contains(line),
                    "{orm}'s sample line is not in orms.js: {line}"
                );
            }
        }
        assert!(worker.contains(&format!("export const JSON_EACH_ROWS = {JSON_EACH_ROWS};")));
    }

    #[test]
    fn the_committed_prisma_schema_is_the_one_generated() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap();
        let path = root.join("worker-orm/prisma/schema.prisma");
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(&path, prisma_schema()).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap();
        assert!(
            committed == prisma_schema(),
            "{} is stale: UPDATE_GOLDEN=1 rewrites it from base::orm::prisma_schema()",
            path.display()
        );
    }

    #[test]
    fn table_columns_type_every_third_column_an_integer() {
        let columns = table_columns(4);
        assert_eq!(columns[2], ("c2".to_owned(), "integer"));
        assert_eq!(columns[3], ("c3".to_owned(), "text"));
    }
}
