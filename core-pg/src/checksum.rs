//! The core's content checksum (`d1bench_core::checksum`: each row's code of decimal digits,
//! hashed in two lanes, summed over rows) computed by Postgres, so a probe's table on Postgres
//! is held against the same host-side checksum of the generated rows as D1's is.
//!
//! A value's `hex()` in SQLite is `upper(encode(convert_to(v, 'UTF8'), 'hex'))` here (an
//! integer's of its decimal text, `v::text`); the values' hex joined by `X`, and that string's
//! own hex, is the row's code, all decimal digits, kept as `bytea`: `substr` of a text in a UTF-8
//! database walks the text from its start to find a character, so reading a row's chunks from
//! text took time quadratic in its length (18-24 s to verify 500 rows of 1,000 bytes, measured),
//! where a byte string is read at an offset. The chunks of 18 digits are read with `substr`
//! and weighted by the lane's radix to the chunk's position, from a recursive CTE of weights as
//! long as the longest code, row by row (a lateral subquery, not a join grouped by the code); `wrong_types` counts NULLs (a column's type is enforced by
//! Postgres, so a NULL is the one wrong value it can hold). Sums go through `numeric` and come
//! back as `bigint`, the seven columns of [`d1bench_core::Checksum::COLUMNS`].

use std::fmt::Write;

use d1bench_core::checksum::LANES;
use d1bench_core::generate::{ColumnType, column_type};

/// Digits per chunk of a code: the core's (the most a 64-bit integer holds whatever the digits).
const CHUNK_DIGITS: usize = 18;

/// One value's hex, upper case as SQLite's `hex()` writes it; `''` for NULL, as SQLite's.
fn hex_of(column: usize) -> String {
    let text = match column_type(column) {
        ColumnType::Text => format!("c{column}"),
        ColumnType::Integer => format!("c{column}::text"),
    };
    format!("coalesce(upper(encode(convert_to({text}, 'UTF8'), 'hex')), '')")
}

/// The SELECT that answers the checksum of `table` (of `columns` columns) in one row.
pub fn checksum_sql(table: &str, columns: usize) -> String {
    let inner = (0..columns)
        .map(hex_of)
        .collect::<Vec<_>>()
        .join(" || 'X' || ");
    let nulls = (0..columns)
        .map(|j| format!("(c{j} IS NULL)::int"))
        .collect::<Vec<_>>()
        .join(" + ");
    let [l1, l2] = LANES;
    let (p1, r1, p2, r2) = (l1.prime, l1.radix, l2.prime, l2.radix);
    let d = CHUNK_DIGITS;
    let mut sql = String::new();
    write!(
        sql,
        "WITH RECURSIVE \
         codes AS MATERIALIZED (SELECT \
           convert_to(encode(convert_to({inner}, 'UTF8'), 'hex'), 'UTF8') AS code, \
           ({nulls}) AS wrong FROM {table}), \
         w(q, w1, w2) AS (SELECT 1, {r1}::bigint, {r2}::bigint UNION ALL \
           SELECT q + 1, w1 * {r1} % {p1}, w2 * {r2} % {p2} FROM w \
           WHERE q < (SELECT coalesce(max((length(code) + {d} - 1) / {d}), 0) FROM codes)), \
         hashed AS (SELECT length(c.code)::bigint AS digits, c.wrong, \
           (length(c.code) + x.s1) % {p1} AS h1, (length(c.code) + x.s2) % {p2} AS h2 \
           FROM codes c CROSS JOIN LATERAL (SELECT \
             coalesce(sum(encode(substr(c.code, (w.q - 1) * {d} + 1, {d}), 'escape')::bigint % {p1} * w.w1 % {p1}), 0) AS s1, \
             coalesce(sum(encode(substr(c.code, (w.q - 1) * {d} + 1, {d}), 'escape')::bigint % {p2} * w.w2 % {p2}), 0) AS s2 \
             FROM w WHERE w.q <= (length(c.code) + {d} - 1) / {d}) AS x) \
         SELECT count(*)::bigint AS \"rows\", coalesce(sum(wrong), 0)::bigint AS wrong_types, \
           coalesce(sum(digits), 0)::bigint AS code_digits, \
           coalesce(sum(h1) % {p1}, 0)::bigint AS hash_sum_1, \
           coalesce(sum(h1 * h1 % {p1}) % {p1}, 0)::bigint AS hash_squares_1, \
           coalesce(sum(h2) % {p2}, 0)::bigint AS hash_sum_2, \
           coalesce(sum(h2 * h2 % {p2}) % {p2}, 0)::bigint AS hash_squares_2 \
         FROM hashed"
    )
    .unwrap();
    sql
}
