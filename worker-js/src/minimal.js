// d1bench's minimal JavaScript Worker (`--worker js-minimal`): the least a JavaScript Worker can
// put in the window, so that the twin (`index.js`) can be held against it. The same routes,
// bodies and steps around the window as the twin (`steps.js`); its `POST /probe` window is two
// `Date.now()` readings around the writes and nothing else: every statement prepared and bound,
// then one `db.batch()` (bound, literal, json, batched-rows), one `.run()` each (per-row,
// stopping at the first failure) or one `db.exec()` (exec), until the answer arrives. No parts
// of the window (`bind_ms`, `call_ms`, `read_ms` stay empty), no `--debug-slow` wait; what the
// answers say (`meta.changes`, `meta.duration`) is read after the window closes.
//
// All routes need `Authorization: Bearer <BENCH_TOKEN>`. No dependencies, no build step.

import { errorText, serve } from "./steps.js";

const NAME = "d1bench-worker-js-minimal";
// The workspace's version (Cargo.toml); a test keeps the two equal.
const VERSION = "0.1.0";

export default {
  fetch: (request, env) => serve(request, env, { name: NAME, version: VERSION }, probe),
};

// `POST /probe`: the rows written, timed, and nothing else in the window.
async function probe(db, inserts, { started, bodyRead, parsed }) {
  const { probe, texts, text_of: textOf, values, payloads, script } = inserts;
  if ((probe.debug_slow_percent ?? 0) > 0) {
    throw new Error("the minimal JavaScript Worker has no --debug-slow wait in its window");
  }
  let answers = [];
  let exec = null;
  let sent = 0;
  let failed = null;
  const opened = Date.now();
  try {
    if (script !== undefined) {
      sent = textOf.length;
      exec = await db.exec(script);
    } else {
      const statements = textOf.map((text, k) => {
        const statement = db.prepare(texts[text]);
        if (values !== undefined) return statement.bind(...values[k]);
        if (payloads !== undefined) return statement.bind(payloads[k]);
        return statement;
      });
      if (probe.strategy === "per-row") {
        for (const statement of statements) {
          sent += 1;
          answers.push(await statement.run());
        }
      } else {
        sent = statements.length;
        answers = await db.batch(statements);
      }
    }
  } catch (e) {
    failed = e;
  }
  const closed = Date.now();

  // After the window: what the answers say, and (debugging the harness only) the corruption.
  const error = failed === null ? null : errorText(failed);
  if (inserts.corrupt) await db.prepare(inserts.corrupt).run();
  let changes = 0;
  let durationMs = exec ? (exec.duration ?? null) : answers.length > 0 ? 0 : null;
  if (exec) {
    const ran = typeof exec.count === "number" ? exec.count : 0;
    for (let k = 0; k < Math.min(ran, inserts.statement_rows.length); k++) {
      changes += inserts.statement_rows[k];
    }
  }
  for (const answer of answers) {
    changes += answer?.meta?.changes ?? 0;
    const duration = answer?.meta?.duration;
    durationMs = durationMs !== null && typeof duration === "number" ? durationMs + duration : null;
  }
  const calls = script !== undefined || probe.strategy !== "per-row" ? (sent > 0 ? 1 : 0) : sent;
  return {
    probe_id: probe.probe_id,
    strategy: probe.strategy,
    columns: probe.columns,
    row_bytes: probe.row_bytes,
    rows_expected: changes,
    statements_planned: textOf.length,
    statements_sent: sent,
    d1_calls: calls,
    rows_per_statement: inserts.rows_per_statement,
    max_statement_bytes: inserts.max_statement_bytes,
    prepare_ms: bodyRead - started,
    inside_ms: closed - opened,
    handover_ms: parsed - bodyRead,
    bind_ms: null,
    call_ms: null,
    read_ms: null,
    d1_ms: durationMs,
    outcome: error === null ? "ok" : "error",
    refusal: null,
    error,
  };
}
probe.needs = ["texts", "text_of", "statement_rows", "rows_per_statement", "max_statement_bytes"];
