//! Tests of `probe.rs`, apart so that file holds only what it is for.

use super::*;

fn probe() -> ProbeRequest {
    ProbeRequest {
        probe_id: 1,
        strategy: Strategy::Bound,
        columns: 8,
        rows: 100,
        row_bytes: 100,
        seed: 1,
        rows_per_statement: None,
        json_payload_bytes: None,
        text: TextMix::default(),
        indexes: 0,
        debug_corrupt: None,
        debug_slow_percent: None,
    }
}

#[test]
fn valid_probe_passes_and_round_trips_json() {
    let p = probe();
    p.validate().unwrap();
    let json = serde_json::to_string(&p).unwrap();
    assert_eq!(serde_json::from_str::<ProbeRequest>(&json).unwrap(), p);
}

#[test]
fn each_bad_field_is_named() {
    type Breaks = fn(&mut ProbeRequest);
    let cases: [(Breaks, &str); 23] = [
        (
            |p| {
                p.strategy = Strategy::Json;
                p.json_payload_bytes = Some(2_000_001)
            },
            "json_payload_bytes",
        ),
        (
            |p| {
                p.strategy = Strategy::Json;
                p.json_payload_bytes = Some(0)
            },
            "json_payload_bytes",
        ),
        (|p| p.json_payload_bytes = Some(1_000), "json_payload_bytes"),
        (
            |p| {
                p.strategy = Strategy::BatchedRows;
                p.rows_per_statement = Some(3)
            },
            "rows_per_statement",
        ),
        (|p| p.columns = 0, "columns"),
        (|p| p.rows = 0, "rows"),
        (|p| p.row_bytes = 100_000_000, "row_bytes"),
        (|p| p.row_bytes = 0, "row_bytes"),
        // 3 bytes asked for, but 16 integer columns take 8 bytes each.
        (
            |p| {
                p.columns = 50;
                p.row_bytes = 3
            },
            "row_bytes",
        ),
        // One byte short of the 128 those 16 integers take.
        (
            |p| {
                p.columns = 50;
                p.row_bytes = 127
            },
            "row_bytes",
        ),
        // 1 byte asked for, but 666 integer columns take 8 bytes each.
        (
            |p| {
                p.columns = 2_000;
                p.row_bytes = 1;
                p.rows = 100_000
            },
            "row_bytes",
        ),
        (|p| p.indexes = 9, "indexes"),
        (
            |p| {
                p.columns = 100;
                p.row_bytes = 1_000;
                p.indexes = 65
            },
            "indexes",
        ),
        (
            |p| {
                p.columns = 2;
                p.debug_corrupt = Some(Corruption::Integer)
            },
            "debug_corrupt",
        ),
        (
            |p| {
                p.rows = 1;
                p.debug_corrupt = Some(Corruption::SwapRows)
            },
            "debug_corrupt",
        ),
        (
            |p| {
                p.columns = 1;
                p.debug_corrupt = Some(Corruption::SwapColumns)
            },
            "debug_corrupt",
        ),
        (|p| p.text.non_ascii_share = -0.1, "text.non-ascii-share"),
        (|p| p.rows_per_statement = Some(0), "rows_per_statement"),
        (
            |p| {
                p.strategy = Strategy::PerRow;
                p.rows_per_statement = Some(3)
            },
            "rows_per_statement",
        ),
        (|p| p.text.escape_share = 1.5, "text.escape-share"),
        (|p| p.text.nul_share = f64::NAN, "text.nul-share"),
        (|p| p.debug_slow_percent = Some(0), "debug_slow_percent"),
        (|p| p.debug_slow_percent = Some(1_001), "debug_slow_percent"),
    ];
    for (break_it, field) in cases {
        let mut p = probe();
        break_it(&mut p);
        assert_eq!(p.validate().unwrap_err().field, field);
    }
}

#[test]
fn rows_as_small_as_their_columns_allow_pass_and_smaller_ones_say_why() {
    let mut p = probe();
    p.columns = 50;
    p.row_bytes = 128;
    p.validate().unwrap();
    p.columns = 2;
    p.row_bytes = 1;
    p.validate().unwrap();
    p.columns = 50;
    p.row_bytes = 3;
    assert_eq!(
        p.validate().unwrap_err().to_string(),
        "`row_bytes`: 50 columns take at least 128 bytes (16 integer columns of 8 bytes \
         each), got 3: rows would be written at 128 bytes"
    );
    p.row_bytes = 0;
    assert_eq!(
        p.validate().unwrap_err().to_string(),
        "`row_bytes`: must be at least 1: a row without payload measures nothing"
    );
}

#[test]
fn unknown_json_fields_and_strategies_are_rejected_by_name() {
    let err = serde_json::from_str::<ProbeRequest>(
        r#"{"probe_id":1,"strategy":"bound","columns":1,"rows":1,"row_bytes":1,"seed":1,"sql":"DROP TABLE x"}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("unknown field `sql`"), "{err}");
    let err = serde_json::from_str::<ProbeRequest>(
        r#"{"probe_id":1,"strategy":"fast","columns":1,"rows":1,"row_bytes":1,"seed":1}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("unknown variant `fast`"), "{err}");
}

#[test]
fn indexes_and_corruption_default_to_none_and_are_named_in_json() {
    let p: ProbeRequest = serde_json::from_str(
        r#"{"probe_id":1,"strategy":"bound","columns":8,"rows":1,"row_bytes":1,"seed":1}"#,
    )
    .unwrap();
    assert_eq!((p.indexes, p.debug_corrupt), (0, None));
    let mut p = probe();
    p.indexes = 8;
    p.validate().unwrap();
    p.debug_corrupt = Some(Corruption::TextByte);
    let json = serde_json::to_string(&p).unwrap();
    assert!(json.contains(r#""debug_corrupt":"text-byte""#), "{json}");
    assert_eq!(serde_json::from_str::<ProbeRequest>(&json).unwrap(), p);
}

#[test]
fn debug_slow_defaults_to_none_and_asks_its_share_of_the_window() {
    let p: ProbeRequest = serde_json::from_str(
        r#"{"probe_id":1,"strategy":"bound","columns":8,"rows":1,"row_bytes":8,"seed":1}"#,
    )
    .unwrap();
    assert_eq!((p.debug_slow_percent, p.debug_slow_ms(40.0)), (None, 0.0));
    let mut p = probe();
    p.debug_slow_percent = Some(20);
    p.validate().unwrap();
    assert_eq!(p.debug_slow_ms(40.0), 8.0);
    let json = serde_json::to_string(&p).unwrap();
    assert!(json.contains(r#""debug_slow_percent":20"#), "{json}");
    assert_eq!(serde_json::from_str::<ProbeRequest>(&json).unwrap(), p);
}

#[test]
fn a_verification_without_served_by_still_parses_and_one_with_it_round_trips() {
    let local = r#"{"probe_id":1,"table_exists":true,"rows_present":1,
        "checksum":null}"#;
    let mut result: VerifyResult = serde_json::from_str(local).unwrap();
    assert_eq!(result.served_by, None);
    assert!(
        !serde_json::to_string(&result)
            .unwrap()
            .contains("served_by")
    );
    result.served_by = ServedBy::reported(Some("WEUR".into()), None, None);
    let json = serde_json::to_string(&result).unwrap();
    assert!(json.contains(r#""served_by":{"region":"WEUR"}"#), "{json}");
    assert_eq!(serde_json::from_str::<VerifyResult>(&json).unwrap(), result);
    // A replica's answer says so; nothing reported is no `served_by` at all.
    result.served_by = ServedBy::reported(Some("ENAM".into()), Some("IAD".into()), Some(false));
    let json = serde_json::to_string(&result).unwrap();
    assert!(
        json.contains(r#""served_by":{"region":"ENAM","colo":"IAD","primary":false}"#),
        "{json}"
    );
    assert_eq!(serde_json::from_str::<VerifyResult>(&json).unwrap(), result);
    assert_eq!(ServedBy::reported(None, None, None), None);
}

#[test]
fn outcome_names_parse_back_and_serialize_the_same() {
    for outcome in Outcome::ALL {
        assert_eq!(outcome.name().parse::<Outcome>(), Ok(outcome));
        assert_eq!(outcome.to_string(), outcome.name());
        assert_eq!(
            serde_json::to_string(&outcome).unwrap(),
            format!("\"{}\"", outcome.name())
        );
    }
    assert!(
        "refusal"
            .parse::<Outcome>()
            .unwrap_err()
            .contains("ok, refused, error")
    );
}

#[test]
fn strategy_names_parse_back() {
    for &s in Strategy::REPORT_ORDER {
        assert_eq!(s.name().parse::<Strategy>().unwrap(), s);
    }
    assert!("batch".parse::<Strategy>().is_err());
    let mut ordered = Strategy::REPORT_ORDER.to_vec();
    ordered.sort();
    // COPY too where the build knows it (the `postgres` feature, which a workspace test run
    // turns on for every crate, as the xtask asks for it).
    let mut every = Strategy::ALL.to_vec();
    if cfg!(feature = "postgres") {
        every.extend("copy".parse::<Strategy>());
    }
    every.sort();
    assert_eq!(ordered, every, "every strategy is reported, once");
}
