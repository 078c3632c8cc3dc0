//! Tests of `handover.rs`: the INSERTs either Worker hands the binding are the planner's, and
//! the JavaScript Worker's bodies carry them whole.

use super::*;
use crate::generate::TextMix;
use crate::probe::Corruption;
use serde_json::Value as Json;

fn probe(strategy: Strategy, columns: usize, rows: usize) -> ProbeRequest {
    ProbeRequest {
        probe_id: 3,
        strategy,
        columns,
        rows,
        row_bytes: 300,
        seed: 5,
        rows_per_statement: None,
        json_payload_bytes: None,
        text: TextMix::HOSTILE,
        indexes: 1,
        debug_corrupt: None,
        debug_slow_percent: None,
    }
}

fn json_of(value: &Value) -> Json {
    match value {
        Value::Integer(n) => Json::from(*n),
        Value::Text(s) => Json::from(s.as_str()),
    }
}

/// For every strategy, the JavaScript Worker's body gives back the planner's statements: each
/// statement's SQL (through `texts` and `text_of`), its values exactly (NUL, quotes and
/// multi-byte text included), its rows, or the exec script.
#[test]
fn the_js_body_carries_exactly_the_planned_statements() {
    for strategy in Strategy::ALL {
        for columns in [1, 3, 64] {
            let mut request = probe(strategy, columns, 23);
            request.debug_corrupt = Some(Corruption::TextByte);
            let plan = sql::plan(&request);
            let inserts = Inserts::of(&request);
            let probe_json = serde_json::to_string(&request).unwrap();
            let body: Json = serde_json::from_str(&inserts.js_body(&probe_json)).unwrap();
            let back: ProbeRequest = serde_json::from_value(body["probe"].clone()).unwrap();
            assert_eq!(back, request);
            let texts = body["texts"].as_array().unwrap();
            let text_of = body["text_of"].as_array().unwrap();
            assert_eq!(text_of.len(), plan.inserts.len(), "{strategy} C={columns}");
            assert_eq!(inserts.statements(), plan.inserts.len());
            let rows: Vec<usize> = plan.inserts.iter().map(|s| s.rows).collect();
            let sent_rows: Vec<usize> =
                serde_json::from_value(body["statement_rows"].clone()).unwrap();
            assert_eq!(sent_rows, rows);
            assert_eq!(body["rows_per_statement"], plan.rows_per_statement());
            assert_eq!(body["max_statement_bytes"], plan.max_statement_bytes());
            assert_eq!(body["corrupt"], Json::from(plan.corrupt.clone().unwrap()));
            for (k, statement) in plan.inserts.iter().enumerate() {
                let text = &texts[text_of[k].as_u64().unwrap() as usize];
                assert_eq!(text.as_str().unwrap(), statement.sql, "{strategy} #{k}");
                let params: Vec<Json> = statement.params.iter().map(json_of).collect();
                match strategy {
                    Strategy::Json => assert_eq!(body["payloads"][k], params[0]),
                    Strategy::Exec | Strategy::Literal => assert!(params.is_empty()),
                    _ => assert_eq!(body["values"][k], Json::from(params), "{strategy} #{k}"),
                }
            }
            let has = |key: &str| body.get(key).is_some();
            assert_eq!(has("script"), strategy == Strategy::Exec);
            assert_eq!(has("payloads"), strategy == Strategy::Json);
            assert_eq!(
                has("values"),
                !matches!(
                    strategy,
                    Strategy::Exec | Strategy::Json | Strategy::Literal
                )
            );
            if strategy == Strategy::Exec {
                assert_eq!(body["script"], Json::from(sql::exec_script(&plan.inserts)));
            }
        }
    }
}

/// A bound probe's full statements share one text: it is sent once.
#[test]
fn a_bound_probes_texts_are_sent_once_each() {
    let inserts = Inserts::of(&probe(Strategy::Bound, 10, 95));
    assert_eq!(
        inserts.texts.len(),
        2,
        "nine full statements of 10 rows and one of 5"
    );
    assert_eq!(inserts.text_of, [0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
    assert_eq!(inserts.rows_per_statement, 10);
}

/// The setup and verification bodies carry the SQL the Rust Worker runs for the same probe.
#[test]
fn the_js_setup_and_verify_bodies_carry_the_planned_sql() {
    let request = probe(Strategy::Bound, 8, 10);
    let probe_json = serde_json::to_string(&request).unwrap();
    let setup: Json = serde_json::from_str(&js_setup_body(&request, &probe_json)).unwrap();
    assert_eq!(setup["setup"], Json::from(sql::setup(&request)));
    let verify: Json = serde_json::from_str(&js_verify_body(&request, &probe_json)).unwrap();
    let v = sql::verification(&request);
    for (key, sql) in [
        ("exists", v.exists),
        ("count", v.count),
        ("checksum", v.checksum),
        ("teardown", v.teardown),
    ] {
        assert_eq!(verify["verification"][key], Json::from(sql), "{key}");
    }
    assert_eq!(verify["probe"]["probe_id"], 3);
}
