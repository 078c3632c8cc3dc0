//! The content checksum of a probe's table: one SELECT every target runs, and the same numbers
//! computed on the host from the row generator, so the rows present are compared with the rows
//! sent by content, not only by count.
//!
//! The checksum is a handful of exact integer sums, independent of row order:
//!
//! - `rows`: the rows present;
//! - `text_bytes`: the bytes of every text value;
//! - `text_digest`: the sum over every byte of every text value of the byte's weight: its
//!   position (from 1) among the non-NUL bytes of [`text_alphabet`] (0 for any other byte), plus
//!   128 for each of its two hex digits that is `0`. SQL concatenates a row's texts and counts
//!   each alphabet byte in them with `replace()` (a pass in C over the row), and the zero digits
//!   of `hex()`; NUL needs the second term because `replace()` takes a pattern that starts with
//!   NUL for an empty one;
//! - `text_heads`: the first character (`unicode()`) of every text value times its column's
//!   weight (column `j` weighs `j + 1`), so texts that changed columns show;
//! - `int_low`, `int_mid`, `int_high`: every integer split into 18-bit limbs (`n & 0x3FFFF`,
//!   `(n >> 18) & 0x3FFFF`, `n >> 36`), each limb times its column's weight;
//! - `wrong_types`: values whose type is not their column's (a NULL, a REAL, a BLOB).
//!
//! What it catches for certain: any one byte of a text changed, added or removed (the byte count
//! moves, or the digest does: the first terms of two different bytes differ by less than 128 and
//! are equal only when both are 0, i.e. a NUL and a byte outside the alphabet, whose zero digits
//! differ), any one integer changed (its limbs determine it), a value of the wrong type, a
//! missing or extra row. What it cannot see: changes that cancel exactly, bytes moved within a
//! row's texts (beyond their first characters).
//!
//! Cost: about 90 passes in C over the text, roughly a second per 10 MB, paid in its own request
//! after the timed one. For tables within D1's 100 columns (larger ones are refused at CREATE
//! TABLE) every sum stays below 2^53 up to [`MAX_EXACT_PAYLOAD_BYTES`] of payload, so D1 returns
//! it exactly as a JavaScript number, and the SELECT fits D1's statement limit.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::generate::{ColumnType, RowGenerator, Value, column_type, text_alphabet};

/// Largest table payload (text bytes plus [`crate::generate::INTEGER_BYTES`] per integer, over
/// all rows) whose checksum stays below 2^53, so exact in a JavaScript number, for tables within
/// D1's 100 columns. One byte of payload adds less than 2^25 to any sum: the most is a text's
/// first character, column weight 100 times a code point up to 0x10FFFF over its 4 bytes
/// (an integer adds at most 100 × 2^18 to a limb sum over its 8 bytes; a text byte at most 383
/// to the digest); and 2^28 × 2^25 = 2^53. `rows` and `wrong_types` count rows and values.
pub const MAX_EXACT_PAYLOAD_BYTES: usize = 1 << 28;

/// Bits per integer limb.
const LIMB_BITS: u32 = 18;
const LIMB_MASK: i64 = (1 << LIMB_BITS) - 1;

/// What each `0` digit of a byte's hex form adds to its weight: more than the largest
/// difference between two alphabet positions.
const ZERO_DIGIT_WEIGHT: i64 = 128;

/// The content checksum of a table (see the module documentation for each field).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checksum {
    pub rows: i64,
    pub text_bytes: i64,
    pub text_digest: i64,
    pub text_heads: i64,
    pub int_low: i64,
    pub int_mid: i64,
    pub int_high: i64,
    pub wrong_types: i64,
}

impl Checksum {
    /// The names of the checksum SQL's result columns, in the order of [`Checksum::fields`].
    pub const COLUMNS: [&'static str; 8] = [
        "rows",
        "text_bytes",
        "text_digest",
        "text_heads",
        "int_low",
        "int_mid",
        "int_high",
        "wrong_types",
    ];

    /// A checksum from its parts in [`Checksum::COLUMNS`] order.
    pub fn from_fields(f: [i64; 8]) -> Self {
        let [
            rows,
            text_bytes,
            text_digest,
            text_heads,
            int_low,
            int_mid,
            int_high,
            wrong_types,
        ] = f;
        Checksum {
            rows,
            text_bytes,
            text_digest,
            text_heads,
            int_low,
            int_mid,
            int_high,
            wrong_types,
        }
    }

    /// A checksum read from a result row of the checksum SQL, column by column by name.
    pub fn read<E>(mut get: impl FnMut(&str) -> Result<i64, E>) -> Result<Self, E> {
        let mut fields = [0; 8];
        for (field, column) in fields.iter_mut().zip(Self::COLUMNS) {
            *field = get(column)?;
        }
        Ok(Self::from_fields(fields))
    }

    fn fields(&self) -> [i64; 8] {
        [
            self.rows,
            self.text_bytes,
            self.text_digest,
            self.text_heads,
            self.int_low,
            self.int_mid,
            self.int_high,
            self.wrong_types,
        ]
    }
}

impl fmt::Display for Checksum {
    /// The fields in order, separated by `:`, as results.csv holds them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let fields = self.fields().map(|n| n.to_string());
        f.write_str(&fields.join(":"))
    }
}

impl std::str::FromStr for Checksum {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let parts: Vec<i64> = s
            .split(':')
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map_err(|e| format!("`{s}` is not a checksum: {e}"))?;
        let fields: [i64; 8] = parts
            .try_into()
            .map_err(|_| format!("`{s}` is not a checksum: expected 8 numbers separated by `:`"))?;
        Ok(Checksum::from_fields(fields))
    }
}

/// The weight of column `j` in the sums.
fn column_weight(j: usize) -> i64 {
    j as i64 + 1
}

/// The alphabet bytes `replace()` can count: all but NUL.
fn counted_bytes() -> Vec<u8> {
    text_alphabet().into_iter().filter(|&b| b != 0).collect()
}

/// The weight of each byte value in the text digest (see the module documentation).
fn byte_weights() -> [i64; 256] {
    let counted = counted_bytes();
    debug_assert!((counted.len() as i64) < ZERO_DIGIT_WEIGHT);
    let mut weights = [0i64; 256];
    for (b, weight) in weights.iter_mut().enumerate() {
        let zero_digits = i64::from(b >> 4 == 0) + i64::from(b & 0xF == 0);
        *weight = ZERO_DIGIT_WEIGHT * zero_digits;
    }
    for (i, &b) in counted.iter().enumerate() {
        weights[b as usize] += i as i64 + 1;
    }
    weights
}

/// The digest of some text bytes.
fn text_digest(weights: &[i64; 256], bytes: &[u8]) -> i64 {
    bytes.iter().map(|&b| weights[b as usize]).sum()
}

impl Checksum {
    /// The checksum of a table holding exactly `rows` (in any order).
    pub fn of_rows(rows: impl IntoIterator<Item = Vec<Value>>) -> Checksum {
        let weights = byte_weights();
        let mut sum = Checksum::default();
        for row in rows {
            sum.rows += 1;
            for (j, value) in row.iter().enumerate() {
                let w = column_weight(j);
                match value {
                    Value::Text(s) => {
                        sum.text_bytes += s.len() as i64;
                        sum.text_digest += text_digest(&weights, s.as_bytes());
                        sum.text_heads +=
                            w * s.chars().next().map_or(0, |c| i64::from(u32::from(c)));
                    }
                    Value::Integer(n) => {
                        sum.int_low += w * (n & LIMB_MASK);
                        sum.int_mid += w * ((n >> LIMB_BITS) & LIMB_MASK);
                        sum.int_high += w * (n >> (2 * LIMB_BITS));
                    }
                }
            }
        }
        sum
    }

    /// The checksum of the first `rows` rows `generator` makes: what a table must hold after a
    /// probe acknowledged that many rows (rows are written in generator order).
    pub fn expected(generator: &RowGenerator, rows: usize) -> Checksum {
        Checksum::of_rows((0..rows as u64).map(|i| generator.row(i)))
    }
}

/// Deepest expression tree D1 accepts: its SQLite is built with an expression depth limit of
/// 100 (local D1 answers `Expression tree is too large (maximum depth 100)`).
pub const MAX_EXPRESSION_DEPTH: usize = 100;

/// `terms` joined by the associative operator `op` as a balanced tree of parentheses, so the
/// expression is about log2(n) deep rather than n; `empty` when there are none.
fn balanced(terms: &[String], op: &str, empty: &str) -> String {
    match terms {
        [] => empty.to_owned(),
        [one] => one.clone(),
        _ => {
            let (left, right) = terms.split_at(terms.len() / 2);
            format!(
                "({}{op}{})",
                balanced(left, op, empty),
                balanced(right, op, empty)
            )
        }
    }
}

/// The SELECT that computes [`Checksum`] over `table` of `columns` columns (typed as the
/// generator types them); it answers one row whose column names are the field names.
///
/// A materialized CTE first reduces every row to its texts as one blob and its per-row sums
/// (so the blob is made once per row, and the CTE has six columns whatever the table's width);
/// the outer SELECT sums them. Every sum is a balanced tree, well within
/// [`MAX_EXPRESSION_DEPTH`].
pub fn checksum_sql(table: &str, columns: usize) -> String {
    let of_type =
        |ty: ColumnType| -> Vec<usize> { (0..columns).filter(|&j| column_type(j) == ty).collect() };
    let (texts, integers) = (of_type(ColumnType::Text), of_type(ColumnType::Integer));
    // A row's sum over some columns; 0 when there are none.
    let row_sum = |columns: &[usize], term: &dyn Fn(usize) -> String| -> String {
        let terms: Vec<String> = columns.iter().map(|&j| term(j)).collect();
        balanced(&terms, "+", "0")
    };
    let w = column_weight;
    let low = row_sum(&integers, &|j| format!("{}*(c{j}&{LIMB_MASK})", w(j)));
    let mid = row_sum(&integers, &|j| {
        format!("{}*((c{j}>>{LIMB_BITS})&{LIMB_MASK})", w(j))
    });
    let high = row_sum(&integers, &|j| {
        format!("{}*(c{j}>>{})", w(j), 2 * LIMB_BITS)
    });
    let heads = row_sum(&texts, &|j| format!("{}*coalesce(unicode(c{j}),0)", w(j)));
    let all: Vec<usize> = (0..columns).collect();
    let wrong = row_sum(&all, &|j| {
        let ty = match column_type(j) {
            ColumnType::Text => "text",
            ColumnType::Integer => "integer",
        };
        format!("(typeof(c{j})<>'{ty}')")
    });
    // A row's texts as one blob (`||` keeps every byte, NULs included).
    let concatenated: Vec<String> = texts.iter().map(|&j| format!("c{j}")).collect();
    let blob = balanced(&concatenated, "||", "''");
    // Σ weight × count, with count(byte) = length − length without that byte; then the zero
    // digits of the hex form, which has 2 × length digits.
    let counted = counted_bytes();
    let total_weight: i64 = (1..=counted.len() as i64).sum();
    let without: Vec<String> = counted
        .iter()
        .enumerate()
        .map(|(i, byte)| {
            format!(
                "length(CAST(replace(b,X'{byte:02X}','') AS BLOB))*{}",
                i + 1
            )
        })
        .collect();
    let digest = format!(
        "length(b)*{total_weight}-{}+{ZERO_DIGIT_WEIGHT}*(2*length(b)-length(replace(hex(b),'0','')))",
        balanced(&without, "+", "0")
    );

    // Materialized, so the concatenation is made once per row, not once per use of `b`.
    format!(
        "WITH v AS MATERIALIZED (SELECT CAST({blob} AS BLOB) AS b, {heads} AS heads, \
         {low} AS low, {mid} AS mid, {high} AS high, {wrong} AS wrong FROM {table}) \
         SELECT count(*) AS rows, coalesce(sum(length(b)),0) AS text_bytes, \
         coalesce(sum({digest}),0) AS text_digest, coalesce(sum(heads),0) AS text_heads, \
         coalesce(sum(low),0) AS int_low, coalesce(sum(mid),0) AS int_mid, \
         coalesce(sum(high),0) AS int_high, coalesce(sum(wrong),0) AS wrong_types FROM v"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::TextMix;
    use crate::limits::{MAX_COLUMNS, MAX_STATEMENT_BYTES};
    use crate::probe::{Corruption, ProbeRequest, Strategy};
    use crate::sql::plan;
    use rusqlite::Connection;

    fn probe(columns: usize, rows: usize, row_bytes: usize, text: TextMix) -> ProbeRequest {
        ProbeRequest {
            probe_id: 5,
            strategy: Strategy::Bound,
            columns,
            rows,
            row_bytes,
            seed: 3,
            rows_per_statement: None,
            text,
            indexes: 0,
            debug_corrupt: None,
        }
    }

    /// Writes a probe's rows into SQLite with its plan.
    fn written(p: &ProbeRequest) -> Connection {
        crate::sql::tests::execute(&plan(p))
    }

    fn in_sql(db: &Connection, p: &ProbeRequest) -> Checksum {
        db.query_row(&checksum_sql(&p.table(), p.columns), [], |r| {
            Checksum::read(|c| r.get(c))
        })
        .unwrap()
    }

    fn expected(p: &ProbeRequest) -> Checksum {
        let generator = RowGenerator::new(p.columns, p.row_bytes, p.seed, p.text);
        Checksum::expected(&generator, p.rows)
    }

    #[test]
    fn sqlite_computes_what_the_host_computes() {
        for text in [TextMix::default(), TextMix::HOSTILE] {
            for (columns, row_bytes) in [(1, 50), (2, 7), (3, 300), (8, 1_000), (64, 2_000)] {
                let p = probe(columns, 40, row_bytes, text);
                let db = written(&p);
                let host = expected(&p);
                assert_eq!(in_sql(&db, &p), host, "C={columns} bytes={row_bytes}");
                assert_eq!(host.rows, 40);
                assert_eq!(host.wrong_types, 0);
                assert!(host.text_digest > 0);
                assert_eq!(host.int_low == 0, columns < 3);
            }
        }
    }

    #[test]
    fn sqlite_computes_the_host_digest_of_any_bytes_too() {
        // Corrupted values need not be UTF-8 nor made of alphabet bytes: SQL and host must agree
        // on those as well, or a corruption could hide in the difference.
        let weights = byte_weights();
        let db = Connection::open_in_memory().unwrap();
        db.execute("CREATE TABLE t (c0 TEXT)", []).unwrap();
        let every_byte: Vec<u8> = (0..=255u8).rev().collect();
        let values: Vec<Vec<u8>> = vec![
            every_byte.clone(),
            vec![0, 0, 0],
            vec![0x10, 0x0A, 0x00, 0x01],
            b"plain".to_vec(),
            Vec::new(),
            every_byte.iter().map(|b| b.wrapping_mul(7)).collect(),
        ];
        for value in &values {
            db.execute("DELETE FROM t", []).unwrap();
            db.execute("INSERT INTO t VALUES (CAST(?1 AS TEXT))", [value])
                .unwrap();
            let sql: (i64, i64) = db
                .query_row(&checksum_sql("t", 1), [], |r| {
                    Ok((r.get("text_bytes")?, r.get("text_digest")?))
                })
                .unwrap();
            assert_eq!(
                sql,
                (value.len() as i64, text_digest(&weights, value)),
                "{value:02x?}"
            );
        }
    }

    #[test]
    fn an_empty_table_sums_to_zero_rows_and_nothing_else() {
        let p = probe(5, 10, 100, TextMix::HOSTILE);
        let db = written(&p);
        db.execute(&format!("DELETE FROM {}", p.table()), [])
            .unwrap();
        assert_eq!(in_sql(&db, &p), Checksum::default());
        assert_eq!(Checksum::of_rows(Vec::new()), Checksum::default());
    }

    #[test]
    fn every_single_byte_change_of_a_text_changes_its_digest_or_length() {
        let weights = byte_weights();
        let generator = RowGenerator::new(2, 40, 9, TextMix::HOSTILE);
        let Value::Text(text) = &generator.row(0)[1] else {
            unreachable!("column 1 is text")
        };
        // A value as written and as SQLite hands it back: bytes, not necessarily UTF-8 once
        // corrupted, which is what the checksum looks at.
        let bytes = text.as_bytes();
        let sums = |b: &[u8]| (b.len(), text_digest(&weights, b));
        let before = sums(bytes);
        for at in 0..bytes.len() {
            for new in (0..=255u8).filter(|&new| new != bytes[at]) {
                let mut changed = bytes.to_vec();
                changed[at] = new;
                assert_ne!(
                    sums(&changed),
                    before,
                    "byte {at}: {:#04x} -> {new:#04x}",
                    bytes[at]
                );
            }
            let mut shorter = bytes.to_vec();
            shorter.remove(at);
            assert_ne!(sums(&shorter), before, "byte {at} removed");
            let mut longer = bytes.to_vec();
            longer.insert(at, b'a');
            assert_ne!(sums(&longer), before, "a byte inserted at {at}");
        }
    }

    #[test]
    fn every_changed_integer_changes_the_checksum() {
        let generator = RowGenerator::new(3, 100, 9, TextMix::default());
        let row = generator.row(0);
        let before = Checksum::of_rows([row.clone()]);
        let Value::Integer(n) = row[2] else {
            unreachable!("column 2 is an integer")
        };
        for delta in [
            1i64,
            -1,
            2,
            1 << 18,
            1 << 36,
            -(1 << 36),
            3 << 50,
            i64::MIN / 2,
        ] {
            let mut changed = row.clone();
            changed[2] = Value::Integer(n.wrapping_add(delta));
            assert_ne!(Checksum::of_rows([changed]), before, "{n} + {delta}");
        }
    }

    #[test]
    fn the_planned_corruptions_are_caught_in_sqlite() {
        for corruption in [Corruption::TextByte, Corruption::Integer] {
            for text in [TextMix::default(), TextMix::HOSTILE] {
                let mut p = probe(4, 30, 200, text);
                p.debug_corrupt = Some(corruption);
                let db = written(&p);
                assert_eq!(in_sql(&db, &p), expected(&p), "before corrupting");
                let corrupt = plan(&p).corrupt.expect("the plan holds the corruption");
                assert_eq!(db.execute(&corrupt, []).unwrap(), 1, "one row changed");
                let after = in_sql(&db, &p);
                assert_ne!(after, expected(&p), "{corruption:?} went unnoticed");
                assert_eq!(after.rows, 30, "still the same number of rows");
                if corruption == Corruption::TextByte {
                    assert_eq!(after.text_bytes, expected(&p).text_bytes, "same length");
                }
            }
        }
    }

    #[test]
    fn a_value_of_the_wrong_type_or_in_the_wrong_column_is_caught() {
        let p = probe(4, 10, 100, TextMix::default());
        let table = p.table();
        for change in [
            format!("UPDATE {table} SET c2 = c2 + 0.5 WHERE rowid = 3"),
            format!("UPDATE {table} SET c1 = NULL WHERE rowid = 3"),
            format!("UPDATE {table} SET c0 = c1, c1 = c0 WHERE rowid = 3"),
            format!("DELETE FROM {table} WHERE rowid = 3"),
        ] {
            let db = written(&p);
            db.execute(&change, []).unwrap();
            assert_ne!(in_sql(&db, &p), expected(&p), "{change}");
        }
    }

    #[test]
    fn the_sql_runs_within_d1s_limits_at_d1s_column_limit() {
        let sql = checksum_sql("t_5", MAX_COLUMNS);
        assert!(sql.len() < MAX_STATEMENT_BYTES);
        // Under D1's expression depth and column limits, a 100-column table checksums, and a
        // left-deep sum of its columns (what the checksum avoids) would not.
        let p = probe(MAX_COLUMNS, 20, 2_000, TextMix::HOSTILE);
        let db = written(&p);
        db.set_limit(
            rusqlite::limits::Limit::SQLITE_LIMIT_EXPR_DEPTH,
            MAX_EXPRESSION_DEPTH as i32,
        )
        .unwrap();
        db.set_limit(
            rusqlite::limits::Limit::SQLITE_LIMIT_COLUMN,
            MAX_COLUMNS as i32,
        )
        .unwrap();
        assert_eq!(in_sql(&db, &p), expected(&p));
        let deep: Vec<String> = (0..MAX_COLUMNS).map(|j| format!("length(c{j})")).collect();
        let err = db
            .query_row(&format!("SELECT {} FROM t_5", deep.join("+")), [], |r| {
                r.get::<_, i64>(0)
            })
            .unwrap_err();
        assert!(
            err.to_string().contains("Expression tree is too large"),
            "{err}"
        );
    }

    #[test]
    fn no_payload_byte_adds_enough_to_break_exactness() {
        // The most one byte of payload adds to any sum, at D1's widest table.
        let weight = column_weight(MAX_COLUMNS - 1);
        let digest = *byte_weights().iter().max().unwrap();
        // A text's head over the bytes of its first character, per UTF-8 length.
        let head = [
            (1, 0x7F),
            (2, 0x7FF),
            (3, 0xFFFF),
            (4, i64::from(u32::from(char::MAX))),
        ]
        .into_iter()
        .map(|(bytes, code_point)| weight * code_point / bytes)
        .max()
        .unwrap();
        let limb = weight * LIMB_MASK / crate::generate::INTEGER_BYTES as i64;
        let per_byte = digest.max(head).max(limb);
        assert!(per_byte < 1 << 25, "{per_byte}");
        assert!(
            (MAX_EXACT_PAYLOAD_BYTES as i64)
                .checked_mul(per_byte)
                .unwrap()
                < 1 << 53
        );
    }

    #[test]
    fn balanced_sums_are_shallow() {
        let terms: Vec<String> = (1..=5).map(|i| i.to_string()).collect();
        assert_eq!(balanced(&terms, "+", "0"), "((1+2)+(3+(4+5)))");
        assert_eq!(balanced(&terms[..1], "+", "0"), "1");
        assert_eq!(balanced(&[], "||", "''"), "''");
    }

    #[test]
    fn checksums_print_and_parse_back() {
        let sum = Checksum {
            rows: 3,
            text_bytes: 40,
            text_digest: 9_000,
            text_heads: 97,
            int_low: -1,
            int_mid: 2,
            int_high: -3,
            wrong_types: 0,
        };
        assert_eq!(sum.to_string(), "3:40:9000:97:-1:2:-3:0");
        assert_eq!(sum.to_string().parse::<Checksum>(), Ok(sum));
        assert!(
            "1:2:3"
                .parse::<Checksum>()
                .unwrap_err()
                .contains("8 numbers")
        );
        assert!("a:b".parse::<Checksum>().is_err());
    }
}
