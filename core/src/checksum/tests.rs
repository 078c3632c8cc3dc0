//! Unit tests of the content checksum: SQL and host agree, limits, exactness, single bytes.

use super::*;
use crate::generate::{INTEGER_BYTES, TextMix};
use crate::limits::{MAX_COLUMNS, MAX_STATEMENT_BYTES};
use crate::probe::{Corruption, MAX_PROBE_COLUMNS, MAX_PROBE_ROWS, ProbeRequest, Strategy};
use crate::sql::plan;
use rusqlite::Connection;
use rusqlite::limits::Limit;

pub(super) fn probe(columns: usize, rows: usize, row_bytes: usize, text: TextMix) -> ProbeRequest {
    ProbeRequest {
        probe_id: 5,
        strategy: Strategy::Bound,
        columns,
        rows,
        row_bytes,
        seed: 3,
        rows_per_statement: None,
        json_payload_bytes: None,
        text,
        indexes: 0,
        debug_corrupt: None,
        debug_slow_percent: None,
    }
}

/// Writes a probe's rows into SQLite with its plan.
pub(super) fn written(p: &ProbeRequest) -> Connection {
    crate::sql::tests::execute(&plan(p))
}

pub(super) fn in_sql(db: &Connection, p: &ProbeRequest) -> Checksum {
    db.query_row(&checksum_sql(&p.table(), p.columns), [], |r| {
        Checksum::read(|c| r.get(c))
    })
    .unwrap()
}

pub(super) fn expected(p: &ProbeRequest) -> Checksum {
    let generator = RowGenerator::new(p.columns, p.row_bytes, p.seed, p.text);
    Checksum::expected(&generator, p.rows)
}

/// Workerd's limits on the SQL D1 runs (`SqliteDatabase::setupSecurity`), strictest of
/// them and D1's documented ones.
fn limit_as_d1(db: &Connection) {
    for (limit, value) in [
        (Limit::SQLITE_LIMIT_LENGTH, MAX_ROW_BYTES),
        (Limit::SQLITE_LIMIT_SQL_LENGTH, MAX_STATEMENT_BYTES),
        (Limit::SQLITE_LIMIT_COLUMN, MAX_COLUMNS),
        (Limit::SQLITE_LIMIT_EXPR_DEPTH, MAX_EXPRESSION_DEPTH),
        (Limit::SQLITE_LIMIT_COMPOUND_SELECT, 5),
        (Limit::SQLITE_LIMIT_VDBE_OP, 25_000),
        (Limit::SQLITE_LIMIT_FUNCTION_ARG, MAX_FUNCTION_ARGS),
    ] {
        db.set_limit(limit, value as i32).unwrap();
    }
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
            assert!(host.hash_sum_1 > 0 && host.hash_squares_2 > 0);
        }
    }
}

#[test]
fn rows_stored_in_any_order_checksum_the_same() {
    let p = probe(5, 30, 120, TextMix::HOSTILE);
    let generator = RowGenerator::new(p.columns, p.row_bytes, p.seed, p.text);
    let db = written(&p);
    let table = p.table();
    db.execute_batch(&format!(
        "CREATE TABLE shuffled AS SELECT * FROM {table} ORDER BY hex(c1) DESC; \
         DELETE FROM {table}; INSERT INTO {table} SELECT * FROM shuffled;"
    ))
    .unwrap();
    let first: String = db
        .query_row(
            &format!("SELECT c0 FROM {table} ORDER BY rowid LIMIT 1"),
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_ne!(Value::Text(first), generator.row(0)[0], "the order changed");
    assert_eq!(in_sql(&db, &p), expected(&p));
}

#[test]
fn sqlite_codes_any_bytes_and_integers_as_the_host_does() {
    // Corrupted values need not be UTF-8: SQL and host must agree on any bytes, or a
    // corruption could hide in the difference.
    let db = Connection::open_in_memory().unwrap();
    db.execute("CREATE TABLE t (c0 TEXT, c1 TEXT, c2 INTEGER)", [])
        .unwrap();
    let every_byte: Vec<u8> = (0..=255u8).rev().collect();
    let texts: Vec<Vec<u8>> = vec![
        every_byte.clone(),
        vec![0, 0, 0],
        vec![0x10, 0x0A, 0x00, 0x01],
        b"plain".to_vec(),
        Vec::new(),
        every_byte.iter().map(|b| b.wrapping_mul(7)).collect(),
    ];
    let integers = [
        0,
        -1,
        9,
        99_999,
        i64::MAX,
        i64::MIN,
        -8_999_999_999_999_999_999,
    ];
    let mut host = Checksum::default();
    for (i, text) in texts.iter().enumerate() {
        for (k, n) in integers.iter().enumerate() {
            let other = &texts[(i + k) % texts.len()];
            db.execute(
                "INSERT INTO t VALUES (CAST(?1 AS TEXT), CAST(?2 AS TEXT), ?3)",
                rusqlite::params![text, other, n],
            )
            .unwrap();
            let n = n.to_string();
            host.add_code(&code_of([text.as_slice(), other, n.as_bytes()]));
        }
    }
    let sql = db
        .query_row(&checksum_sql("t", 3), [], |r| Checksum::read(|c| r.get(c)))
        .unwrap();
    assert_eq!(sql, host);
    // A row whose code is empty: one column holding '' (or NULL, of the wrong type).
    db.execute_batch("CREATE TABLE e (c0 TEXT); INSERT INTO e VALUES (''), (NULL), ('a');")
        .unwrap();
    let mut host = Checksum::default();
    for value in [b"".as_slice(), b"", b"a"] {
        host.add_code(&code_of([value]));
    }
    host.wrong_types = 1;
    let sql = db
        .query_row(&checksum_sql("e", 1), [], |r| Checksum::read(|c| r.get(c)))
        .unwrap();
    assert_eq!(sql, host);
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

/// The checksum of `rows` from their codes written out in full: the definition the streaming
/// [`RowHasher`] must match.
fn by_definition(rows: &[Vec<Value>]) -> Checksum {
    let mut sum = Checksum::default();
    for row in rows {
        let bytes: Vec<Vec<u8>> = row
            .iter()
            .map(|value| match value {
                Value::Text(s) => s.as_bytes().to_vec(),
                Value::Integer(n) => n.to_string().into_bytes(),
            })
            .collect();
        sum.add_code(&code_of(bytes.iter().map(Vec::as_slice)));
    }
    sum
}

#[test]
fn the_streaming_hash_equals_the_codes_written_out() {
    // Widths that put every chunk boundary at every offset of a byte's 4 digits and of the
    // separator's 2, hostile text (every byte value the generator makes), and the extreme
    // integers, whose text is longest.
    for columns in [1, 2, 3, 5, 8, 17, 64, 100] {
        for row_bytes in [columns * INTEGER_BYTES, 37, 100, 1_000, 4_099] {
            for mix in [TextMix::default(), TextMix::HOSTILE] {
                let generator = RowGenerator::new(columns, row_bytes, 11, mix);
                let rows: Vec<Vec<Value>> = (0..20).map(|i| generator.row(i)).collect();
                assert_eq!(
                    Checksum::of_rows(rows.clone()),
                    by_definition(&rows),
                    "{columns} columns, {row_bytes} bytes, {mix:?}"
                );
            }
        }
    }
    let extremes = vec![
        vec![Value::Integer(i64::MIN), Value::Text(String::new())],
        vec![
            Value::Integer(i64::MAX),
            Value::Integer(0),
            Value::Integer(-1),
        ],
        vec![
            Value::Text("\0'\"\u{7f}é😀".into()),
            Value::Integer(-9_007_199_254_740_991),
        ],
    ];
    assert_eq!(
        Checksum::of_rows(extremes.clone()),
        by_definition(&extremes)
    );
}

/// The prime factors of `n`, by trial division.
fn prime_factors(mut n: u64) -> Vec<u64> {
    let mut factors = Vec::new();
    let mut d = 2;
    while d * d <= n {
        if n.is_multiple_of(d) {
            factors.push(d);
            while n.is_multiple_of(d) {
                n /= d;
            }
        }
        d += 1;
    }
    if n > 1 {
        factors.push(n);
    }
    factors
}

fn pow_mod(base: u64, mut exponent: u64, prime: u64) -> u64 {
    let (mut result, mut base) = (1, base % prime);
    while exponent > 0 {
        if exponent & 1 == 1 {
            result = result * base % prime;
        }
        base = base * base % prime;
        exponent >>= 1;
    }
    result
}

#[test]
fn each_lane_is_a_prime_below_2_31_and_a_primitive_root_of_it() {
    for lane in LANES {
        assert!(lane.prime < 1 << 31);
        assert_eq!(prime_factors(lane.prime), [lane.prime], "{lane:?} prime");
        for q in prime_factors(lane.prime - 1) {
            assert_ne!(
                pow_mod(lane.radix, (lane.prime - 1) / q, lane.prime),
                1,
                "{lane:?}"
            );
        }
    }
    assert_ne!(LANES[0], LANES[1]);
}

#[test]
fn one_changed_byte_always_changes_both_hash_sums() {
    // A byte's code is 4 digits in place. Inside one chunk a change is x·10^s with
    // 0 < |x| < 10^4, which no prime above 10^4 divides; across two chunks it is a
    // (|a| < 1000) in the first and b·10^s (0 < |b| < 1000, s < 18) in the next, whose
    // weight is the radix times the first's. It cancels only if a + b·10^s·R ≡ 0 (mod P):
    // never, for either lane.
    for lane in LANES {
        let p = lane.prime;
        assert!(p > 10_000 && p % 2 != 0 && p % 5 != 0);
        for s in 0..CHUNK_DIGITS as u64 {
            let shift = pow_mod(10, s, p) * lane.radix % p;
            for b in 1..1_000u64 {
                for sign in [b, p - b] {
                    // a = -(±b·10^s·R) mod P, as the residue nearest zero.
                    let a = (p - sign * shift % p) % p;
                    assert!(a >= 1_000 && p - a >= 1_000, "{lane:?} s={s} b={b}");
                }
            }
        }
    }
    // And on a real value, host-side, every single byte replaced by every other.
    let generator = RowGenerator::new(3, 60, 9, TextMix::HOSTILE);
    let row = generator.row(0);
    let [Value::Text(a), Value::Text(b), Value::Integer(n)] = &row[..] else {
        unreachable!("text, text, integer")
    };
    let n = n.to_string();
    let of = |first: &[u8]| {
        let mut sum = Checksum::default();
        sum.add_code(&code_of([first, b.as_bytes(), n.as_bytes()]));
        sum
    };
    let before = of(a.as_bytes());
    for at in 0..a.len() {
        for new in (0..=255u8).filter(|&new| new != a.as_bytes()[at]) {
            let mut changed = a.as_bytes().to_vec();
            changed[at] = new;
            let after = of(&changed);
            assert_eq!(after.code_digits, before.code_digits, "in place");
            assert!(
                after.hash_sum_1 != before.hash_sum_1 && after.hash_sum_2 != before.hash_sum_2,
                "byte {at} -> {new:#04x}"
            );
        }
    }
}

#[test]
fn the_planned_corruptions_are_caught_in_sqlite() {
    for corruption in Corruption::ALL {
        for text in [TextMix::default(), TextMix::HOSTILE] {
            let mut p = probe(4, 30, 200, text);
            p.debug_corrupt = Some(corruption);
            let db = written(&p);
            assert_eq!(in_sql(&db, &p), expected(&p), "before corrupting");
            let corrupt = plan(&p).corrupt.expect("the plan holds the corruption");
            let changed = db.execute(&corrupt, []).unwrap();
            assert_eq!(changed, corruption.rows_changed(), "{corruption:?}");
            let after = in_sql(&db, &p);
            assert_ne!(after, expected(&p), "{corruption:?} went unnoticed");
            assert_eq!(after.rows, 30, "still the same number of rows");
            assert_eq!(after.wrong_types, 0, "still the same types");
            if corruption != Corruption::Integer {
                assert_eq!(after.code_digits, expected(&p).code_digits, "same lengths");
            }
        }
    }
}

#[test]
fn the_sql_runs_within_d1s_limits_at_d1s_column_limit() {
    let sql = checksum_sql("t_5", MAX_COLUMNS);
    assert!(sql.len() < MAX_STATEMENT_BYTES);
    // Under workerd's limits, a 100-column table checksums, and a left-deep sum of its
    // columns (what the checksum avoids) would not.
    let p = probe(MAX_COLUMNS, 20, 2_000, TextMix::HOSTILE);
    let db = written(&p);
    limit_as_d1(&db);
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
fn rows_up_to_the_checksummed_maximum_fit_d1s_string_limit() {
    // The longest code per payload byte: 4 digits per text byte, 80 per 20-character
    // integer, at D1's widest table.
    let columns = MAX_COLUMNS;
    let is_text = |j: usize| column_type(j) == ColumnType::Text;
    let texts = (0..columns).filter(|&j| is_text(j)).count();
    let integer = b"-8999999999999999999";
    let text_bytes = MAX_CHECKSUMMED_ROW_BYTES - (columns - texts) * INTEGER_BYTES;
    let row: Vec<Vec<u8>> = (0..columns)
        .map(|j| match is_text(j) {
            true => vec![0x9F; text_bytes / texts + usize::from(j == 0) * (text_bytes % texts)],
            false => integer.to_vec(),
        })
        .collect();
    let db = Connection::open_in_memory().unwrap();
    db.execute(&crate::sql::create_table("t", columns), [])
        .unwrap();
    let slots: Vec<String> = (1..=columns)
        .map(|n| match is_text(n - 1) {
            true => format!("CAST(?{n} AS TEXT)"),
            false => format!("CAST(CAST(?{n} AS TEXT) AS INTEGER)"),
        })
        .collect();
    db.execute(
        &format!("INSERT INTO t VALUES ({})", slots.join(",")),
        rusqlite::params_from_iter(&row),
    )
    .unwrap();
    limit_as_d1(&db);
    let code = code_of(row.iter().map(Vec::as_slice));
    assert!(code.len() <= MAX_ROW_BYTES, "{}", code.len());
    let mut host = Checksum::default();
    host.add_code(&code);
    let sql = db
        .query_row(&checksum_sql("t", columns), [], |r| {
            Checksum::read(|c| r.get(c))
        })
        .unwrap();
    assert_eq!(sql, host);
}

#[test]
fn no_sum_can_break_exactness() {
    // code_digits: 4 digits per text byte, at most 80 per 8-byte integer, 2 per separator.
    let longest_integer = code_of([i64::MIN.to_string().as_bytes()]).len();
    assert_eq!(longest_integer, 80);
    assert_eq!(code_of([[0x9Fu8; 10].as_slice()]).len(), 40);
    assert_eq!(
        code_of([b"".as_slice(), b"", b""]).len(),
        2 * 2,
        "separators"
    );
    let values = (MAX_PROBE_ROWS * MAX_PROBE_COLUMNS) as u64;
    assert!(values < 1 << 31);
    let digits = (MAX_EXACT_PAYLOAD_BYTES as u64) * 80 / 8 + 2 * values;
    assert!(digits < 1 << 53, "{digits}");
    // Each hash sum is reduced below its prime; before that, the row sums stay below 2^63.
    let rows = MAX_PROBE_ROWS as u64;
    assert!(rows * LANES[0].prime.max(LANES[1].prime) < 1 << 62);
    // A chunk's digits and a term's product stay below 2^63 too.
    assert!(10u64.pow(CHUNK_DIGITS as u32) < 1 << 63);
    assert!((LANES[0].prime.max(LANES[1].prime) - 1).pow(2) < 1 << 62);
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
        wrong_types: 0,
        code_digits: 9_000,
        hash_sum_1: 97,
        hash_squares_1: 1,
        hash_sum_2: 2_147_483_000,
        hash_squares_2: 5,
    };
    assert_eq!(sum.to_string(), "3:0:9000:97:1:2147483000:5");
    assert_eq!(sum.to_string().parse::<Checksum>(), Ok(sum));
    assert!(
        "1:2:3"
            .parse::<Checksum>()
            .unwrap_err()
            .contains("7 numbers")
    );
    assert!("a:b".parse::<Checksum>().is_err());
}

#[test]
fn no_generated_row_has_a_longer_code_than_its_shape_allows() {
    for text in [TextMix::default(), TextMix::HOSTILE] {
        for (columns, row_bytes) in [(1, 0), (1, 50), (3, 7), (8, 1_000), (100, 2_000)] {
            let generator = RowGenerator::new(columns, row_bytes, 11, text);
            let longest = (0..50)
                .map(|i| {
                    let mut sum = Checksum::default();
                    sum.add_code(&code_of(
                        generator
                            .row(i)
                            .iter()
                            .map(|value| match value {
                                Value::Text(s) => s.as_bytes().to_vec(),
                                Value::Integer(n) => n.to_string().into_bytes(),
                            })
                            .collect::<Vec<_>>()
                            .iter()
                            .map(Vec::as_slice),
                    ));
                    sum.code_digits as usize
                })
                .max()
                .unwrap();
            let bound = longest_code(&generator);
            assert!(
                longest <= bound,
                "C={columns} bytes={row_bytes}: {longest} > {bound}"
            );
            // Integers vary in length; texts do not: the bound is tight without integers.
            if columns < 3 {
                assert_eq!(longest, bound, "C={columns} bytes={row_bytes}");
            }
        }
    }
    // A 1,000-byte row of 8 columns has a code of at most 4,086 digits, 8 rows of weights: 12
    // reads a row.
    let generator = RowGenerator::new(8, 1_000, 1, TextMix::default());
    assert_eq!(longest_code(&generator), 4 * 984 + 4 * 17 * 2 + 2 * 7);
    assert_eq!(rows_read(10_000, 4_086), 10_000 * 12 + 8 + 1);
    // `meta.rows_read` of this SELECT on local D1 (wrangler 4.164), hostile text of seed 4.
    for (columns, rows, row_bytes, measured) in [
        (1, 100, 50, 502),
        (3, 50, 5_000, 1_986),
        (8, 200, 1_000, 2_409),
        (64, 30, 2_000, 617),
    ] {
        let generator = RowGenerator::new(columns, row_bytes, 4, TextMix::HOSTILE);
        assert_eq!(
            rows_read(rows, longest_code(&generator)),
            measured,
            "C={columns}"
        );
    }
}
