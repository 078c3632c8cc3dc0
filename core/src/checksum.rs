//! The content checksum of a probe's table: one SELECT every target runs, and the same numbers
//! computed on the host from the row generator, so the rows present are compared with the rows
//! sent by content and position, not only by count.
//!
//! Each row becomes one string of decimal digits, its *code*: the `hex()` of every value (an
//! integer's of its decimal text) joined by `X` in column order, and that string's own `hex()`.
//! Hex digits and `X` are ASCII bytes 0x30–0x39, 0x41–0x46 and 0x58, so the second `hex()`
//! writes only decimal digits, 4 per byte of a value, and the code spells the row back exactly:
//! every byte, its position in its value, the value's column. SQL makes it with `hex()` and one
//! `concat()` per 32 arguments, loops in C (D1 has no user functions; a `replace()` per
//! non-decimal hex digit would cost more than the longer code does).
//!
//! Each row's code is hashed in two independent *lanes*, each a polynomial modulo a prime below
//! 2^31 ([`LANES`]): read as 18-digit chunks `c_0, c_1, …`, the row's hash is
//! `(digits + Σ (c_q mod P)·R^(q+1)) mod P`, with `R` a primitive root of `P`. SQL reads the
//! chunks with `substr` + `CAST`, 32 per row of a recursive CTE of offsets and weights
//! (`generate_series` is built into neither D1 nor rusqlite's SQLite), so every product stays
//! below 2^62 and every result below 2^53, exact as a JavaScript number. The checksum is a
//! handful of sums over rows, so it does not depend on row order:
//!
//! - `rows`: the rows present;
//! - `wrong_types`: values whose type is not their column's (a NULL, a REAL, a BLOB, a text in
//!   an integer column): the code alone cannot tell a text from a BLOB of the same bytes, nor
//!   NULL from `''`;
//! - `code_digits`: the length of every row's code, so any change of a value's length shows;
//! - `hash_sum_1`, `hash_squares_1` (and `_2` for the second lane): the sum of the row hashes
//!   and of their squares, modulo the lane's prime. The squares see what sums cannot: a swap
//!   between two rows moves hash from one to the other and keeps the sum.
//!
//! What it catches, proven against real SQLite by the mutation tests (`checksum/mutations.rs`:
//! 240 changes of each kind to tables of 4 and 8 columns over 40 seeds, plain and hostile text,
//! every one caught):
//!
//! | change | caught |
//! | --- | --- |
//! | a row missing or added | for certain (`rows`) |
//! | a value's type changed (text, integer, NULL, REAL, BLOB) | for certain (`wrong_types`) |
//! | any one byte of a value changed, added or removed | for certain (see below) |
//! | a value swapped between two rows of a column | unless the hashes collide |
//! | two columns swapped within a row | unless the hashes collide |
//! | bytes reordered within a value | unless the hashes collide |
//! | bytes moved from one value to another | unless the hashes collide |
//! | two edits that cancel (`a`→`b` here, `d`→`c` there) | unless the hashes collide |
//! | a row duplicated and another dropped | unless the hashes collide |
//!
//! One byte changed: its 4 digits of the code change in place. Inside one chunk that changes
//! the chunk by `x·10^s` with `0 < |x| < 10^4`, never a multiple of `P`; across two neighbouring
//! chunks the test `one_changed_byte_always_changes_both_hash_sums` shows it can never cancel
//! for either lane's radix. Either way the row's hash changes, and with it `hash_sum_1` and
//! `hash_sum_2`. One byte added or removed changes `code_digits` by 4.
//!
//! "Unless the hashes collide": every other change is caught unless both lanes miss it by
//! chance. For a change made without knowing the radices, each lane misses it with probability
//! about 1/P, both together about 2^-62 per changed table.
//!
//! Cost: two `hex()` per value and one `substr` + `CAST` per 4.5 bytes of payload, paid in its
//! own request after the timed one: on 10 MB (10,000 rows of 1,000 bytes) 0.52 to 0.82 times
//! the CPU time of the checksum it replaced, which summed byte weights with a `replace()` per
//! byte value (see the README). D1 counts 4 reads of every row and one more per row of the CTE
//! of weights it steps through ([`rows_read`]). A row's code has 4 digits per byte, so it stays
//! within D1's 2,000,000-byte string limit for rows of up to [`MAX_CHECKSUMMED_ROW_BYTES`].

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::generate::{ColumnType, RowGenerator, Value, column_type};
use crate::limits::{MAX_FUNCTION_ARGS, MAX_ROW_BYTES};

/// One lane of the row hash: a prime below 2^31 and a primitive root of it, so that a product
/// of two residues stays below 2^62 and no power of the radix repeats within 2^30 chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lane {
    pub prime: u64,
    pub radix: u64,
}

/// The two lanes: independent primes and radices (the radices drawn at random once).
pub const LANES: [Lane; 2] = [
    Lane {
        prime: 2_147_483_647,
        radix: 1_437_671_202,
    },
    Lane {
        prime: 2_147_483_629,
        radix: 1_692_975_436,
    },
];

/// Digits per chunk of a row's code: the most an SQLite integer holds whatever the digits.
const CHUNK_DIGITS: usize = 18;

/// Chunks read per row of the CTE of offsets and weights. Every row of it a table row steps
/// through costs VM steps and is a row D1 counts as read; 32 keeps its 96 columns within D1's
/// 100.
const CHUNKS_PER_STEP: usize = 32;

/// The separator between two values' `hex()` in a row, and its own `hex()` in the code.
const SEPARATOR: u8 = b'X';

/// Largest row payload whose code fits D1's 2,000,000-byte strings: 4 digits per text byte, at
/// most 80 per integer (20 characters, 8 payload bytes) and 2 per separator, which is 4 digits
/// per byte plus at most 1,832 at D1's 100 columns.
pub const MAX_CHECKSUMMED_ROW_BYTES: usize = (MAX_ROW_BYTES - 2_000) / 4;

/// Largest table payload (text bytes plus [`crate::generate::INTEGER_BYTES`] per integer, over
/// all rows) whose checksum stays below 2^53, so exact in a JavaScript number: `code_digits` adds
/// at most 10 digits per payload byte plus 2 per value, and a probe has fewer than 2^31 values
/// (at most 1,000,000 rows of 2,000 columns, checked by a test). The hash sums are residues
/// below 2^31.
pub const MAX_EXACT_PAYLOAD_BYTES: usize = 1 << 30;

/// The content checksum of a table (see the module documentation for each field).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checksum {
    /// Rows present.
    pub rows: i64,
    /// Values whose type is not their column's.
    pub wrong_types: i64,
    /// Digits of every row's code, summed.
    pub code_digits: i64,
    /// Σ row hash in the first lane, mod its prime.
    pub hash_sum_1: i64,
    /// Σ (row hash)² in the first lane, mod its prime.
    pub hash_squares_1: i64,
    /// Σ row hash in the second lane, mod its prime.
    pub hash_sum_2: i64,
    /// Σ (row hash)² in the second lane, mod its prime.
    pub hash_squares_2: i64,
}

impl Checksum {
    /// The names of the checksum SQL's result columns, in the order of [`Checksum::fields`].
    pub const COLUMNS: [&'static str; 7] = [
        "rows",
        "wrong_types",
        "code_digits",
        "hash_sum_1",
        "hash_squares_1",
        "hash_sum_2",
        "hash_squares_2",
    ];

    /// A checksum from its parts in [`Checksum::COLUMNS`] order.
    pub fn from_fields(f: [i64; 7]) -> Self {
        let [
            rows,
            wrong_types,
            code_digits,
            hash_sum_1,
            hash_squares_1,
            hash_sum_2,
            hash_squares_2,
        ] = f;
        Checksum {
            rows,
            wrong_types,
            code_digits,
            hash_sum_1,
            hash_squares_1,
            hash_sum_2,
            hash_squares_2,
        }
    }

    /// A checksum read from a result row of the checksum SQL, column by column by name.
    pub fn read<E>(mut get: impl FnMut(&str) -> Result<i64, E>) -> Result<Self, E> {
        let mut fields = [0; 7];
        for (field, column) in fields.iter_mut().zip(Self::COLUMNS) {
            *field = get(column)?;
        }
        Ok(Self::from_fields(fields))
    }

    fn fields(&self) -> [i64; 7] {
        [
            self.rows,
            self.wrong_types,
            self.code_digits,
            self.hash_sum_1,
            self.hash_squares_1,
            self.hash_sum_2,
            self.hash_squares_2,
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
        let fields: [i64; 7] = parts
            .try_into()
            .map_err(|_| format!("`{s}` is not a checksum: expected 7 numbers separated by `:`"))?;
        Ok(Checksum::from_fields(fields))
    }
}

/// Appends the `hex()` of `byte` (two ASCII hex digits) to `code`, as the code writes it.
#[cfg(test)]
fn push_hex_of(code: &mut Vec<u8>, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    code.extend_from_slice(&[HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xF)]]);
}

/// The code of a row whose values are these bytes (what `hex()` reads of each value): the
/// `hex()` of the values' `hex()` joined by the separator. The definition, spelled out: the
/// host hashes rows with [`RowHasher`], which the tests hold to this.
#[cfg(test)]
fn code_of<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut inner = Vec::new();
    for (j, bytes) in values.into_iter().enumerate() {
        if j > 0 {
            inner.push(SEPARATOR);
        }
        for &byte in bytes {
            push_hex_of(&mut inner, byte);
        }
    }
    let mut code = Vec::with_capacity(2 * inner.len());
    for byte in inner {
        push_hex_of(&mut code, byte);
    }
    code
}

/// The hash of a row's code in one lane, from the code's digits (the definition; see
/// [`code_of`]).
#[cfg(test)]
fn lane_hash(code: &[u8], lane: Lane) -> u64 {
    let Lane { prime, radix } = lane;
    let mut hash = code.len() as u64 % prime;
    let mut weight = 1;
    for chunk in code.chunks(CHUNK_DIGITS) {
        weight = weight * radix % prime;
        let digits = chunk.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
        hash = (hash + digits % prime * weight) % prime;
    }
    hash
}

/// The 4 digits of the code that one byte of a value becomes, as a number: the `hex()` of the
/// two hex digits of its `hex()` (byte `0x41` is `"41"`, whose bytes `0x34 0x31` are `"3431"`).
const BYTE_DIGITS: [u16; 256] = {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut table = [0u16; 256];
    let mut byte = 0;
    while byte < 256 {
        let (high, low) = (HEX[byte >> 4], HEX[byte & 0xF]);
        table[byte] = hex_as_decimal(high) * 100 + hex_as_decimal(low);
        byte += 1;
    }
    table
};

/// The 2 digits the separator becomes in the code (`hex('X')` = `"58"`).
const SEPARATOR_DIGITS: u16 = hex_as_decimal(SEPARATOR);

/// The `hex()` of an ASCII byte of 0x30–0x59 (a hex digit or the separator) read as a decimal
/// number: both of its hex digits are decimal ones.
const fn hex_as_decimal(c: u8) -> u16 {
    (c >> 4) as u16 * 10 + (c & 0xF) as u16
}

/// Hashes one row's code in both lanes as its digits are made, without writing the code out:
/// each byte of a value adds its 4 digits ([`BYTE_DIGITS`]) to the current 18-digit chunk,
/// carrying over into the next one when it does not fit, and each full chunk is weighted in
/// both lanes. The same numbers as [`lane_hash`] over [`code_of`] (a test holds them equal),
/// without a 4-bytes-per-byte buffer and with each chunk's digits read once for both lanes:
/// the host checksums every probe's rows, and this is most of its cost.
struct RowHasher {
    digits: u64,
    chunk: u64,
    filled: usize,
    hash: [u64; 2],
    weight: [u64; 2],
}

impl RowHasher {
    fn new() -> Self {
        RowHasher {
            digits: 0,
            chunk: 0,
            filled: 0,
            hash: [0; 2],
            weight: [1; 2],
        }
    }

    /// Adds `group`, a number of `width` digits (2 or 4, so it spans at most two chunks).
    fn push(&mut self, group: u16, width: usize) {
        const POW10: [u64; 5] = [1, 10, 100, 1_000, 10_000];
        let group = u64::from(group);
        self.digits += width as u64;
        let room = CHUNK_DIGITS - self.filled;
        if width < room {
            self.chunk = self.chunk * POW10[width] + group;
            self.filled += width;
        } else {
            let rest = width - room;
            self.chunk = self.chunk * POW10[room] + group / POW10[rest];
            self.end_chunk();
            self.chunk = group % POW10[rest];
            self.filled = rest;
        }
    }

    fn end_chunk(&mut self) {
        for (l, lane) in LANES.iter().enumerate() {
            self.weight[l] = self.weight[l] * lane.radix % lane.prime;
            self.hash[l] = (self.hash[l] + self.chunk % lane.prime * self.weight[l]) % lane.prime;
        }
        self.chunk = 0;
        self.filled = 0;
    }

    fn push_value(&mut self, first: bool, bytes: &[u8]) {
        if !first {
            self.push(SEPARATOR_DIGITS, 2);
        }
        for &byte in bytes {
            self.push(BYTE_DIGITS[usize::from(byte)], 4);
        }
    }

    /// The code's length in digits and its hash in each lane.
    fn finish(mut self) -> (u64, [u64; 2]) {
        if self.filled > 0 {
            self.end_chunk();
        }
        let hash = [0, 1].map(|l| (self.hash[l] + self.digits % LANES[l].prime) % LANES[l].prime);
        (self.digits, hash)
    }
}

impl Checksum {
    /// Adds one row, given as its code, to the sums (the definition; see [`code_of`]).
    #[cfg(test)]
    fn add_code(&mut self, code: &[u8]) {
        let hashes = LANES.map(|lane| lane_hash(code, lane));
        self.add_hashed(code.len() as u64, hashes);
    }

    /// Adds one row, given as its code's length and its hash in each lane, to the sums.
    fn add_hashed(&mut self, digits: u64, [h1, h2]: [u64; 2]) {
        self.rows += 1;
        self.code_digits += digits as i64;
        let [p1, p2] = LANES.map(|lane| lane.prime);
        let add = |sum: i64, term: u64, prime: u64| ((sum as u64 + term) % prime) as i64;
        self.hash_sum_1 = add(self.hash_sum_1, h1, p1);
        self.hash_squares_1 = add(self.hash_squares_1, h1 * h1 % p1, p1);
        self.hash_sum_2 = add(self.hash_sum_2, h2, p2);
        self.hash_squares_2 = add(self.hash_squares_2, h2 * h2 % p2, p2);
    }

    /// The checksum of a table holding exactly `rows` (in any order), each value of its
    /// column's type, as the generator makes them (so `wrong_types` is 0).
    pub fn of_rows(rows: impl IntoIterator<Item = Vec<Value>>) -> Checksum {
        let mut sum = Checksum::default();
        // An integer's decimal text: at most 20 bytes (`i64::MIN`).
        let mut number = [0u8; 20];
        for row in rows {
            let mut hasher = RowHasher::new();
            for (j, value) in row.iter().enumerate() {
                match value {
                    Value::Text(s) => hasher.push_value(j == 0, s.as_bytes()),
                    Value::Integer(n) => {
                        hasher.push_value(j == 0, decimal(*n, &mut number));
                    }
                }
            }
            let (digits, hashes) = hasher.finish();
            sum.add_hashed(digits, hashes);
        }
        sum
    }

    /// The checksum of the first `rows` rows `generator` makes: what a table must hold after a
    /// probe acknowledged that many rows (rows are written in generator order).
    pub fn expected(generator: &RowGenerator, rows: usize) -> Checksum {
        Checksum::of_rows((0..rows as u64).map(|i| generator.row(i)))
    }
}

/// `n`'s decimal text (as SQLite's `hex()` reads an integer) written into `buffer`.
fn decimal(n: i64, buffer: &mut [u8; 20]) -> &[u8] {
    let mut at = buffer.len();
    let mut rest = n.unsigned_abs();
    loop {
        at -= 1;
        buffer[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if n < 0 {
        at -= 1;
        buffer[at] = b'-';
    }
    &buffer[at..]
}

/// The most digits the code of a row `generator` makes can have: 4 per text byte, 4 per
/// character of an integer (at most 17: a sign and 16 digits below 2^53), 2 per separator.
pub fn longest_code(generator: &RowGenerator) -> usize {
    let columns = generator.columns();
    let integers = (0..columns)
        .filter(|&j| column_type(j) == ColumnType::Integer)
        .count();
    let text_bytes = generator.row_payload_bytes() - integers * crate::generate::INTEGER_BYTES;
    4 * text_bytes + 4 * 17 * integers + 2 * columns.saturating_sub(1)
}

/// Rows D1 counts as read (one each time a cursor steps onto a row, temporary tables included)
/// by [`checksum_sql`] over `rows` rows whose longest code has `longest_code` digits: every row
/// four times (the table, the codes twice, the hashes), for every row each row of the CTE of
/// weights, and that CTE's steps and one more to build it. Local D1's `meta.rows_read` agreed
/// exactly for tables of 1, 3, 8 and 64 columns.
pub fn rows_read(rows: usize, longest_code: usize) -> usize {
    let steps = longest_code.div_ceil(CHUNK_DIGITS * CHUNKS_PER_STEP).max(1);
    rows * (4 + steps) + steps + 1
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

/// `terms` with the separator between them, joined by `concat`, which copies each byte once
/// per call (`||` copies it once per level of its tree), in calls of at most D1's 32 arguments.
/// (`concat_ws` would be shorter, but it drops empty values.)
fn joined(terms: &[String]) -> String {
    let separator = format!("'{}'", char::from(SEPARATOR));
    let mut parts = Vec::new();
    for (j, term) in terms.iter().enumerate() {
        if j > 0 {
            parts.push(separator.clone());
        }
        parts.push(term.clone());
    }
    concatenated(parts)
}

/// `concat` of `parts`, nested in calls of at most [`MAX_FUNCTION_ARGS`] arguments.
fn concatenated(parts: Vec<String>) -> String {
    if parts.len() <= MAX_FUNCTION_ARGS {
        return format!("concat({})", parts.join(","));
    }
    let groups = parts
        .chunks(MAX_FUNCTION_ARGS)
        .map(|g| concatenated(g.to_vec()));
    concatenated(groups.collect())
}

/// `radix^exponent mod prime`.
fn power(lane: Lane, exponent: usize) -> u64 {
    (0..exponent).fold(1, |w, _| w * lane.radix % lane.prime)
}

/// The SELECT that computes [`Checksum`] over `table` of `columns` columns (typed as the
/// generator types them); it answers one row whose column names are the field names.
///
/// `v` makes every row's code once (materialized, as a BLOB so `substr` indexes bytes); `k` is
/// the recursive CTE of chunk offsets and weights, 32 chunks per row, as many rows as
/// the longest code needs (materialized: left to itself SQLite runs it as a co-routine again for
/// every table row); `h` hashes each row with a correlated subquery over `k`, whose inner
/// `LIMIT -1` keeps it a co-routine so each chunk is cut and parsed once for both lanes; the
/// outer SELECT sums. Every sum is a balanced tree, well within [`MAX_EXPRESSION_DEPTH`].
pub fn checksum_sql(table: &str, columns: usize) -> String {
    let values: Vec<String> = (0..columns).map(|j| format!("hex(c{j})")).collect();
    let code = format!("hex({})", joined(&values));
    let wrong: Vec<String> = (0..columns)
        .map(|j| {
            let ty = match column_type(j) {
                ColumnType::Text => "text",
                ColumnType::Integer => "integer",
            };
            format!("(typeof(c{j})<>'{ty}')")
        })
        .collect();
    let wrong = balanced(&wrong, "+", "0");

    let step_digits = CHUNK_DIGITS * CHUNKS_PER_STEP;
    let slots: Vec<usize> = (0..CHUNKS_PER_STEP).collect();
    // Row `i` of `k`: where each of its chunks starts in a code (`o<u>`, from 1), and their
    // weights in lane `l` (`w<l>_<u>` = radix^(i·slots + u + 1)).
    let mut names = Vec::new();
    let mut first = Vec::new();
    let mut next = Vec::new();
    for u in &slots {
        names.push(format!("o{u}"));
        first.push((u * CHUNK_DIGITS + 1).to_string());
        next.push(format!("o{u}+{step_digits}"));
    }
    // Per lane and row of `k`: Σ (chunk mod P)·weight mod P.
    let mut lane_terms = Vec::new();
    for (l, lane) in LANES.iter().enumerate() {
        let (p, step) = (lane.prime, power(*lane, CHUNKS_PER_STEP));
        let terms: Vec<String> = slots
            .iter()
            .map(|u| {
                names.push(format!("w{l}_{u}"));
                first.push(power(*lane, u + 1).to_string());
                next.push(format!("w{l}_{u}*{step}%{p}"));
                format!("x{u}%{p}*w{l}_{u}%{p}")
            })
            .collect();
        lane_terms.push(format!(
            "(length(d)+coalesce(sum({}),0))%{p}",
            balanced(&terms, "+", "0")
        ));
    }
    let chunks: Vec<String> = slots
        .iter()
        .map(|u| format!("CAST(substr(d,o{u},{CHUNK_DIGITS}) AS INTEGER) AS x{u}"))
        .collect();
    let [p1, p2] = LANES.map(|lane| lane.prime);
    // Both lanes in one integer: the first in the low 32 bits.
    let hashes = format!("{}+({}<<32)", lane_terms[0], lane_terms[1]);
    let weights: Vec<&str> = names[CHUNKS_PER_STEP..]
        .iter()
        .map(String::as_str)
        .collect();
    format!(
        "WITH RECURSIVE \
         v AS MATERIALIZED (SELECT CAST({code} AS BLOB) AS d, {wrong} AS wrong FROM {table}), \
         k({names}) AS MATERIALIZED (SELECT {first} UNION ALL SELECT {next} FROM k \
         WHERE o0+{step_digits}<=(SELECT max(length(d)) FROM v)), \
         h AS MATERIALIZED (SELECT length(d) AS n, wrong, (SELECT {hashes} FROM \
         (SELECT {chunks}, {weights} FROM k WHERE o0<=length(d) LIMIT -1)) AS x \
         FROM v), \
         g AS (SELECT n, wrong, x&4294967295 AS h1, x>>32 AS h2 FROM h) \
         SELECT count(*) AS rows, coalesce(sum(wrong),0) AS wrong_types, \
         coalesce(sum(n),0) AS code_digits, \
         coalesce(sum(h1)%{p1},0) AS hash_sum_1, coalesce(sum(h1*h1%{p1})%{p1},0) AS hash_squares_1, \
         coalesce(sum(h2)%{p2},0) AS hash_sum_2, coalesce(sum(h2*h2%{p2})%{p2},0) AS hash_squares_2 \
         FROM g",
        names = names.join(","),
        first = first.join(","),
        next = next.join(","),
        chunks = chunks.join(","),
        weights = weights.join(","),
    )
}

mod stored;
pub use stored::{StoredRows, StoredValue};

#[cfg(test)]
mod mutations;

#[cfg(test)]
mod tests;
