//! A probe's INSERTs as a Worker hands them to D1's binding: each distinct SQL text once, which
//! text each statement runs, and what the statements bind (or the script that replaces them).
//!
//! Both Workers write exactly these statements. The Rust Worker builds them in the Worker from
//! the probe; the host builds the very same value for the JavaScript Worker (`worker-js/`) and
//! sends it in the request, so there is one planner and one generator, and the JavaScript
//! Worker's statements cannot drift from the Rust Worker's. Either Worker's clock window opens
//! after this value is in hand.

use crate::generate::Value;
use crate::probe::{ProbeRequest, Strategy};
use crate::sql::{self, Statement};

/// What a probe's INSERTs bind, ready before the window opens.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// Nothing bound (literal).
    None,
    /// The values of every statement as one JSON text (see [`sql::values_json`]).
    Json(String),
    /// `json`: each statement's one parameter, the JSON text of its rows.
    Payloads(Vec<String>),
    /// `exec`: no statements are prepared, the script is run as it is.
    Script(String),
}

/// A probe's INSERTs, ready for a Worker's binding: a few strings, so that little is left to
/// free after the writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Inserts {
    /// The SQL texts of the INSERTs, each once (all of a bound probe's full statements are the
    /// same text).
    pub texts: Vec<String>,
    /// Which of `texts` each INSERT runs, in order.
    pub text_of: Vec<usize>,
    /// What the INSERTs bind, or the script that replaces them.
    pub values: Values,
    /// The rows each INSERT writes, in order.
    pub statement_rows: Vec<usize>,
    /// Rows in the largest INSERT.
    pub rows_per_statement: usize,
    /// UTF-8 bytes of the longest INSERT's SQL text.
    pub max_statement_bytes: usize,
    /// Debugging the harness only: the UPDATE that corrupts a row after the writes.
    pub corrupt: Option<String>,
}

impl Inserts {
    /// The INSERTs the shared planner plans for `probe`.
    pub fn of(probe: &ProbeRequest) -> Self {
        Inserts::from_plan(probe.strategy, sql::plan(probe))
    }

    fn from_plan(strategy: Strategy, mut plan: sql::Plan) -> Self {
        let binds = plan.inserts.iter().any(|s| !s.params.is_empty());
        let values = match strategy {
            Strategy::Exec => Values::Script(sql::exec_script(&plan.inserts)),
            // Each payload is already JSON: bound as the string it is, not encoded again.
            Strategy::Json => Values::Payloads(
                plan.inserts
                    .iter_mut()
                    .map(|s| match s.params.pop() {
                        Some(Value::Text(payload)) => payload,
                        other => unreachable!("a json statement binds one text, not {other:?}"),
                    })
                    .collect(),
            ),
            _ if binds => Values::Json(sql::values_json(&plan.inserts)),
            _ => Values::None,
        };
        let statement_rows = plan.inserts.iter().map(|s| s.rows).collect();
        let (rows_per_statement, max_statement_bytes) =
            (plan.rows_per_statement(), plan.max_statement_bytes());
        let mut texts: Vec<String> = Vec::new();
        let mut text_of = Vec::with_capacity(plan.inserts.len());
        for Statement { sql, .. } in plan.inserts {
            if texts.last() != Some(&sql) {
                texts.push(sql);
            }
            text_of.push(texts.len() - 1);
        }
        Inserts {
            texts,
            text_of,
            values,
            statement_rows,
            rows_per_statement,
            max_statement_bytes,
            corrupt: plan.corrupt,
        }
    }

    /// INSERT statements planned.
    pub fn statements(&self) -> usize {
        self.text_of.len()
    }

    /// The request body the JavaScript Worker's `POST /probe` takes: `probe` (the probe
    /// request's own JSON text, as the Rust Worker takes it), then these INSERTs as JSON
    /// (`texts`, `text_of`, `statement_rows`, `rows_per_statement`, `max_statement_bytes`,
    /// `corrupt`, and one of `values` (an array per statement), `payloads` or `script`).
    pub fn js_body(&self, probe_json: &str) -> String {
        let values_bytes = match &self.values {
            Values::None => 0,
            Values::Json(json) | Values::Script(json) => json.len(),
            Values::Payloads(payloads) => payloads.iter().map(|p| p.len() + 8).sum(),
        };
        let texts_bytes: usize = self.texts.iter().map(|t| t.len() + 3).sum();
        let mut out = String::with_capacity(
            probe_json.len() + values_bytes + texts_bytes + 12 * self.text_of.len() + 256,
        );
        out.push_str("{\"probe\":");
        out.push_str(probe_json);
        out.push_str(",\"texts\":");
        push_strings(&mut out, &self.texts);
        out.push_str(",\"text_of\":");
        push_numbers(&mut out, &self.text_of);
        out.push_str(",\"statement_rows\":");
        push_numbers(&mut out, &self.statement_rows);
        out.push_str(&format!(
            ",\"rows_per_statement\":{},\"max_statement_bytes\":{},\"corrupt\":",
            self.rows_per_statement, self.max_statement_bytes
        ));
        match &self.corrupt {
            Some(sql) => sql::push_json_string(&mut out, sql),
            None => out.push_str("null"),
        }
        match &self.values {
            Values::None => {}
            // Already a JSON array of arrays: written as it is.
            Values::Json(json) => {
                out.push_str(",\"values\":");
                out.push_str(json);
            }
            Values::Payloads(payloads) => {
                out.push_str(",\"payloads\":");
                push_strings(&mut out, payloads);
            }
            Values::Script(script) => {
                out.push_str(",\"script\":");
                sql::push_json_string(&mut out, script);
            }
        }
        out.push('}');
        out
    }
}

fn push_strings(out: &mut String, strings: &[String]) {
    out.push('[');
    for (k, s) in strings.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        sql::push_json_string(out, s);
    }
    out.push(']');
}

fn push_numbers(out: &mut String, numbers: &[usize]) {
    out.push('[');
    for (k, n) in numbers.iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str(&n.to_string());
    }
    out.push(']');
}

/// The request body the JavaScript Worker's `POST /setup` takes: the probe and the SQL
/// [`sql::setup`] plans for it.
pub fn js_setup_body(probe: &ProbeRequest, probe_json: &str) -> String {
    let mut out = format!("{{\"probe\":{probe_json},\"setup\":");
    push_strings(&mut out, &sql::setup(probe));
    out.push('}');
    out
}

/// The request body the JavaScript Worker's `POST /verify` takes: the probe and the SQL
/// [`sql::verification`] plans for it.
pub fn js_verify_body(probe: &ProbeRequest, probe_json: &str) -> String {
    let v = sql::verification(probe);
    let mut out = format!("{{\"probe\":{probe_json},\"verification\":{{\"exists\":");
    for (key, sql) in [
        ("", &v.exists),
        (",\"count\":", &v.count),
        (",\"checksum\":", &v.checksum),
        (",\"teardown\":", &v.teardown),
    ] {
        out.push_str(key);
        sql::push_json_string(&mut out, sql);
    }
    out.push_str("}}");
    out
}

#[cfg(test)]
mod tests;
