//! Mutation tests of the content checksum: every class of change the module documentation
//! lists, applied with UPDATE, DELETE and INSERT to tables written from the generator in real
//! SQLite, over many seeds, plain and hostile text; each changed table's checksum must differ
//! from the expected one, and each unchanged table's must equal it.

use super::tests::{expected, in_sql, probe, written};
use super::*;
use crate::generate::TextMix;
use rusqlite::Connection;
use rusqlite::types::Value as SqlValue;

/// The SQLite type a value is stored as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Type {
    Text,
    Integer,
    Real,
    Blob,
    Null,
}

/// One stored value: its type and the bytes `hex()` reads of it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Cell {
    ty: Type,
    bytes: Vec<u8>,
}

type Row = Vec<Cell>;

/// A change to the table; rows are named by their index in generator order (rowid - 1).
#[derive(Debug, Clone)]
enum Edit {
    Set(usize, Row),
    Delete(usize),
    Insert(Row),
}

/// The classes of change, as the module documentation's table names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    SwapRows,
    SwapColumns,
    Reorder,
    MoveBytes,
    Cancel,
    DuplicateAndDrop,
    Type,
    OneByte,
}

impl Class {
    const ALL: [Class; 8] = [
        Class::SwapRows,
        Class::SwapColumns,
        Class::Reorder,
        Class::MoveBytes,
        Class::Cancel,
        Class::DuplicateAndDrop,
        Class::Type,
        Class::OneByte,
    ];

    fn describe(self) -> &'static str {
        match self {
            Class::SwapRows => "a value swapped between two rows of a column",
            Class::SwapColumns => "two columns swapped within a row",
            Class::Reorder => "bytes reordered within a value",
            Class::MoveBytes => "bytes moved from one value to another",
            Class::Cancel => "two edits that cancel (a->b here, d->c there)",
            Class::DuplicateAndDrop => "a row duplicated and another dropped",
            Class::Type => "a value's type changed",
            Class::OneByte => "one byte of a value changed",
        }
    }
}

/// SplitMix64: the tests' own deterministic choices.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    }

    /// Two different numbers below `n` (n ≥ 2).
    fn two(&mut self, n: usize) -> (usize, usize) {
        let a = self.below(n);
        (a, (a + 1 + self.below(n - 1)) % n)
    }
}

fn text_columns(row: &Row) -> Vec<usize> {
    (0..row.len())
        .filter(|&j| row[j].ty == Type::Text)
        .collect()
}

/// One change of `class` to `rows`, chosen by `rng`, with what makes it special; `None` when
/// this pick cannot make one (the caller picks again).
fn mutate(class: Class, rows: &[Row], rng: &mut Rng) -> Option<(Vec<Edit>, &'static str)> {
    let (a, b) = rng.two(rows.len());
    let texts = text_columns(&rows[a]);
    let j = texts[rng.below(texts.len())];
    let value = &rows[a][j].bytes;
    let mut row = rows[a].clone();
    match class {
        Class::SwapRows => {
            let j = rng.below(row.len());
            let mut other = rows[b].clone();
            std::mem::swap(&mut row[j], &mut other[j]);
            let note = if row[j].ty == Type::Integer {
                "integer"
            } else {
                "text"
            };
            Some((vec![Edit::Set(a, row), Edit::Set(b, other)], note))
        }
        Class::SwapColumns => {
            // Two texts that start with the same byte when the row has them: what a checksum
            // of first characters cannot see.
            let pairs: Vec<(usize, usize)> = texts
                .iter()
                .flat_map(|&j| texts.iter().map(move |&k| (j, k)))
                .filter(|&(j, k)| j < k && row[j].bytes != row[k].bytes)
                .collect();
            let alike: Vec<(usize, usize)> = pairs
                .iter()
                .copied()
                .filter(|&(j, k)| row[j].bytes.first() == row[k].bytes.first())
                .collect();
            let from = if alike.is_empty() || rng.below(2) == 0 {
                &pairs
            } else {
                &alike
            };
            let &(j, k) = from.get(rng.below(from.len().max(1)))?;
            let same_head = row[j].bytes.first() == row[k].bytes.first();
            row.swap(j, k);
            let note = if same_head { "same first byte" } else { "" };
            Some((vec![Edit::Set(a, row)], note))
        }
        Class::Reorder => {
            let bytes = &mut row[j].bytes;
            let n = bytes.len();
            let note = match rng.below(3) {
                0 => {
                    let (p, q) = rng.two(n.max(2));
                    bytes.swap(p.min(n - 1), q.min(n - 1));
                    "two bytes swapped"
                }
                1 => {
                    bytes.reverse();
                    "reversed"
                }
                _ => {
                    bytes.rotate_left(1 + rng.below(n.max(2) - 1));
                    "rotated"
                }
            };
            Some((vec![Edit::Set(a, row)], note))
        }
        Class::MoveBytes => {
            let moved = 1 + rng.below(3.min(value.len()));
            let tail = row[j].bytes.split_off(value.len() - moved);
            if rng.below(2) == 0 {
                // To the front of another text of the same row.
                let k = *texts.iter().find(|&&k| k != j)?;
                row[k].bytes.splice(0..0, tail);
                Some((vec![Edit::Set(a, row)], "within a row"))
            } else {
                let mut other = rows[b].clone();
                other[j].bytes.splice(0..0, tail);
                Some((vec![Edit::Set(a, row), Edit::Set(b, other)], "between rows"))
            }
        }
        Class::Cancel => {
            // +1 on one byte, -1 on another: the same position of another row's value in the
            // same column, or another position of the same value.
            let p = rng.below(value.len());
            let up = row[j].bytes[p].checked_add(1)?;
            row[j].bytes[p] = up;
            if rng.below(2) == 0 {
                let mut other = rows[b].clone();
                let down = other[j].bytes.get(p)?.checked_sub(1)?;
                other[j].bytes[p] = down;
                Some((
                    vec![Edit::Set(a, row), Edit::Set(b, other)],
                    "same place, two rows",
                ))
            } else {
                let q = rng.below(value.len());
                let down = row[j].bytes[q].checked_sub(1).filter(|_| q != p)?;
                row[j].bytes[q] = down;
                Some((vec![Edit::Set(a, row)], "one value"))
            }
        }
        Class::DuplicateAndDrop => Some((vec![Edit::Delete(b), Edit::Insert(rows[a].clone())], "")),
        Class::Type => {
            let k = rng.below(row.len());
            let cell = &mut row[k];
            let note = match (cell.ty, rng.below(3)) {
                (Type::Text, 0) | (Type::Integer, 0) => {
                    *cell = Cell {
                        ty: Type::Null,
                        bytes: Vec::new(),
                    };
                    "to NULL"
                }
                (Type::Text, _) | (Type::Integer, 1) => {
                    cell.ty = Type::Blob;
                    "to BLOB, same bytes"
                }
                (_, _) => {
                    // Small enough to keep its .5: a REAL equal to an integer would be stored
                    // as that integer (the column's INTEGER affinity).
                    let n: i64 = std::str::from_utf8(&cell.bytes).ok()?.parse().ok()?;
                    let real = (n % 1_000) as f64 + 0.5;
                    *cell = Cell {
                        ty: Type::Real,
                        bytes: real.to_string().into_bytes(),
                    };
                    "integer to REAL"
                }
            };
            Some((vec![Edit::Set(a, row)], note))
        }
        Class::OneByte => {
            let p = rng.below(value.len());
            let new = (row[j].bytes[p] as usize + 1 + rng.below(255)) % 256;
            row[j].bytes[p] = new as u8;
            Some((vec![Edit::Set(a, row)], ""))
        }
    }
}

/// The table as a sorted list of rows: what the checksum may see of it.
fn multiset(rows: &[Row], edits: &[Edit]) -> Vec<Row> {
    let mut out: Vec<Option<Row>> = rows.iter().cloned().map(Some).collect();
    for edit in edits {
        match edit {
            Edit::Set(i, row) => out[*i] = Some(row.clone()),
            Edit::Delete(i) => out[*i] = None,
            Edit::Insert(row) => out.push(Some(row.clone())),
        }
    }
    let mut out: Vec<Row> = out.into_iter().flatten().collect();
    out.sort();
    out
}

/// A cell as an SQL expression over parameter `n`, and the parameter.
fn bind(cell: &Cell, n: usize) -> (String, SqlValue) {
    match cell.ty {
        // Bound as a BLOB and cast, so any bytes (not only UTF-8) arrive as text.
        Type::Text => (
            format!("CAST(?{n} AS TEXT)"),
            SqlValue::Blob(cell.bytes.clone()),
        ),
        Type::Blob => (format!("?{n}"), SqlValue::Blob(cell.bytes.clone())),
        Type::Integer => {
            let n_ = std::str::from_utf8(&cell.bytes).unwrap().parse().unwrap();
            (format!("?{n}"), SqlValue::Integer(n_))
        }
        Type::Real => {
            let x = std::str::from_utf8(&cell.bytes).unwrap().parse().unwrap();
            (format!("?{n}"), SqlValue::Real(x))
        }
        Type::Null => (format!("?{n}"), SqlValue::Null),
    }
}

/// Applies the edits to the table in SQLite.
fn apply(db: &Connection, table: &str, edits: &[Edit]) {
    for edit in edits {
        let (sql, params): (String, Vec<SqlValue>) = match edit {
            Edit::Set(i, row) => {
                let (sets, mut params): (Vec<String>, Vec<SqlValue>) = row
                    .iter()
                    .enumerate()
                    .map(|(j, cell)| {
                        let (expr, value) = bind(cell, j + 1);
                        (format!("c{j} = {expr}"), value)
                    })
                    .unzip();
                params.push(SqlValue::Integer(*i as i64 + 1));
                let at = params.len();
                (
                    format!("UPDATE {table} SET {} WHERE rowid = ?{at}", sets.join(", ")),
                    params,
                )
            }
            Edit::Delete(i) => (
                format!("DELETE FROM {table} WHERE rowid = ?1"),
                vec![SqlValue::Integer(*i as i64 + 1)],
            ),
            Edit::Insert(row) => {
                let (exprs, params): (Vec<String>, Vec<SqlValue>) = row
                    .iter()
                    .enumerate()
                    .map(|(j, cell)| bind(cell, j + 1))
                    .unzip();
                (
                    format!("INSERT INTO {table} VALUES ({})", exprs.join(", ")),
                    params,
                )
            }
        };
        let changed = db
            .execute(&sql, rusqlite::params_from_iter(params))
            .unwrap();
        assert_eq!(changed, 1, "{sql}");
    }
}

/// The table the generator wrote, as cells.
fn generated(columns: usize, rows: usize, row_bytes: usize, seed: u64, text: TextMix) -> Vec<Row> {
    let generator = RowGenerator::new(columns, row_bytes, seed, text);
    (0..rows as u64)
        .map(|i| {
            generator
                .row(i)
                .into_iter()
                .map(|value| match value {
                    Value::Text(s) => Cell {
                        ty: Type::Text,
                        bytes: s.into_bytes(),
                    },
                    Value::Integer(n) => Cell {
                        ty: Type::Integer,
                        bytes: n.to_string().into_bytes(),
                    },
                })
                .collect()
        })
        .collect()
}

/// Seeds per table shape.
const SEEDS: u64 = 40;
/// Changes of each class per table.
const CASES_PER_TABLE: usize = 3;

#[test]
fn every_class_of_change_is_caught_in_sqlite() {
    // Shapes: narrow rows whose code fits one step of the weights CTE, and wide ones spanning
    // several; text alternates plain and hostile (quotes, backslashes, NUL, newlines, UTF-8).
    let shapes = [(4, 10, 160), (8, 8, 700)];
    let mut caught = vec![(0usize, 0usize, std::collections::BTreeMap::new()); Class::ALL.len()];
    let mut unchanged_tables = 0;
    for (columns, rows, row_bytes) in shapes {
        for seed in 0..SEEDS {
            let text = if seed % 2 == 0 {
                TextMix::HOSTILE
            } else {
                TextMix::default()
            };
            let mut p = probe(columns, rows, row_bytes, text);
            p.seed = seed;
            let db = written(&p);
            let want = expected(&p);
            assert_eq!(in_sql(&db, &p), want, "unchanged, seed {seed}");
            unchanged_tables += 1;
            let table = generated(columns, rows, row_bytes, seed, text);
            let before = multiset(&table, &[]);
            let mut rng = Rng(seed ^ (columns as u64) << 32);
            for (c, &class) in Class::ALL.iter().enumerate() {
                let mut made = 0;
                for _attempt in 0..100 {
                    if made == CASES_PER_TABLE {
                        break;
                    }
                    let Some((edits, note)) = mutate(class, &table, &mut rng) else {
                        continue;
                    };
                    // A change the table cannot show (swapping equal values) is no case.
                    if multiset(&table, &edits) == before {
                        continue;
                    }
                    made += 1;
                    db.execute_batch("SAVEPOINT mutation").unwrap();
                    apply(&db, &p.table(), &edits);
                    let got = in_sql(&db, &p);
                    db.execute_batch("ROLLBACK TO mutation; RELEASE mutation")
                        .unwrap();
                    let entry = &mut caught[c];
                    entry.0 += 1;
                    entry.1 += usize::from(got != want);
                    if !note.is_empty() {
                        *entry.2.entry(note).or_insert(0) += 1;
                    }
                    assert_ne!(
                        got, want,
                        "{class:?} ({note}) missed, seed {seed}: {edits:?}"
                    );
                }
                assert_eq!(
                    made, CASES_PER_TABLE,
                    "{class:?}: too few cases, seed {seed}"
                );
            }
            assert_eq!(in_sql(&db, &p), want, "rolled back, seed {seed}");
        }
    }
    println!("{unchanged_tables} unchanged tables: every checksum equal the expected one");
    println!("| change | cases | caught | of which |");
    println!("| --- | --- | --- | --- |");
    for (class, (cases, hits, notes)) in Class::ALL.iter().zip(&caught) {
        let notes: Vec<String> = notes.iter().map(|(n, k)| format!("{k} {n}")).collect();
        println!(
            "| {} | {cases} | {hits} | {} |",
            class.describe(),
            notes.join(", ")
        );
        assert_eq!(cases, hits);
    }
}
