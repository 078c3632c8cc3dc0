//! The workload definitions' tests: seed statements within D1's limits, tables refused, rows
//! and checksums following the ids.

use super::*;

fn spec(columns: usize) -> TableSpec {
    TableSpec {
        columns,
        row_bytes: 200,
        seed: 1,
        groups: 100,
    }
}

#[test]
fn seed_statements_stay_within_the_bound_parameter_limit() {
    for columns in [3, 8, 20, 98] {
        let s = spec(columns);
        let to = s.seed_batch_rows() as u64;
        let statements = seed_statements(&s, 1, to);
        assert!(statements.len() <= MAX_SEED_STATEMENTS, "{columns}");
        assert_eq!(
            statements.iter().map(|st| st.rows).sum::<usize>(),
            to as usize
        );
        for st in &statements {
            assert!(st.params.len() <= MAX_BOUND_PARAMETERS, "{columns}");
            assert_eq!(st.params.len(), st.rows * (columns + KEY_COLUMNS));
            assert!(st.sql.len() <= crate::limits::MAX_STATEMENT_BYTES);
        }
    }
}

#[test]
fn tables_a_workload_cannot_use_are_refused() {
    assert!(spec(2).check().is_err());
    assert!(spec(99).check().is_err());
    assert!(
        TableSpec {
            row_bytes: 1000,
            ..spec(98)
        }
        .check()
        .is_ok()
    );
    assert!(
        TableSpec {
            groups: 0,
            ..spec(8)
        }
        .check()
        .is_err()
    );
}

#[test]
fn rows_and_checksums_follow_the_ids() {
    let s = spec(4);
    let g = s.generator();
    let row = s.row(&g, 7);
    assert_eq!(row[0], Value::Integer(7));
    assert_eq!(row[1], Value::Integer(7));
    assert_eq!(row[2..], g.row(6)[..]);
    assert_ne!(s.expected_checksum([1, 2]), s.expected_checksum([1, 3]));
    assert_eq!(id_sum([1, 2, 3]), 6);
}
