// d1bench's JavaScript Worker: the same probe protocol as the Rust Worker (`worker/`), written
// as a JavaScript Worker writes to D1, so the two instruments can be measured against each other.
//
// Routes: `GET /health`; `POST /setup`, `POST /probe` and `POST /verify`, each an invocation of
// its own, as the Rust Worker's. Where the Rust Worker plans and generates its statements from
// the probe request, this one takes them in the request, planned by the host with the same
// planner (`d1bench_core::handover`): every body is `{"probe": <the probe request>, ...}` plus
// `setup` (the SQL of /setup), the INSERTs of /probe (`texts`, `text_of`, `statement_rows`,
// `rows_per_statement`, `max_statement_bytes`, `corrupt`, and `values`, `payloads` or
// `script`), or `verification` (the SQL of /verify). So both Workers write exactly the same
// statements, and their rows reconcile by the same count and content checksum.
//
// The clocks of /probe, on `Date.now()` as the Rust Worker's, before the window: `prepare_ms`
// reading the body, `handover_ms` its one JSON.parse (the values become JavaScript values, as
// the Rust Worker's `handover_ms` makes its values JavaScript's); the window (`inside_ms`) has
// the same three parts as the Rust Worker's: `bind_ms` (each statement prepared and its values
// bound), `call_ms` (the D1 calls until their answers arrive), `read_ms` (`meta.changes` and
// `meta.duration` of each answer read). Errors come back
// as D1's text; the host classifies them with the same rules as the Rust Worker's
// (`RefusalKind::classify`), so this Worker answers `outcome` `ok` or `error` only.
//
// All routes need `Authorization: Bearer <BENCH_TOKEN>`. No dependencies, no build step.

import { errorText, serve } from "./steps.js";

const NAME = "d1bench-worker-js";
// The workspace's version (Cargo.toml); a test keeps the two equal.
const VERSION = "0.1.0";

export default {
  fetch: (request, env) => serve(request, env, { name: NAME, version: VERSION }, probe),
};

// `POST /probe`: the rows written and nothing else, and the window's clocks.
async function probe(db, inserts, { started, bodyRead, parsed }) {
  const { probe, text_of: textOf } = inserts;
  const statementsPlanned = textOf.length;

  // The values became JavaScript values when the body was parsed, before the window, as the
  // Rust Worker hands its values over before its window.
  const opened = Date.now();
  let ready = null;
  let failed = null;
  try {
    ready = bindAll(db, inserts);
  } catch (e) {
    failed = errorText(e);
  }
  const boundAt = Date.now();
  const calls = ready
    ? await call(db, probe.strategy, ready)
    : { sent: 0, d1Calls: 0, answers: [], exec: null, error: failed };
  const calledAt = Date.now();
  const read = calls.exec ? readExec(calls.exec, inserts.statement_rows) : readAnswers(calls.answers);
  const readAt = Date.now();
  // Debugging the harness only (`--debug-slow`): a wait inside the window, its share of the
  // window so far, as the Rust Worker's; in none of its parts.
  const slowMs = ((readAt - opened) * (probe.debug_slow_percent ?? 0)) / 100;
  if (slowMs > 0) await new Promise((resolve) => setTimeout(resolve, slowMs));
  // Without the wait, the window closes where the reading ended, so that the three parts add up
  // to it exactly (the local runtime's clock may tick between two statements).
  const closed = slowMs > 0 ? Date.now() : readAt;

  // Debugging the harness only: after the clock stopped.
  if (inserts.corrupt) await db.prepare(inserts.corrupt).run();

  return {
    probe_id: probe.probe_id,
    strategy: probe.strategy,
    columns: probe.columns,
    row_bytes: probe.row_bytes,
    rows_expected: read.changes,
    statements_planned: statementsPlanned,
    statements_sent: calls.sent,
    d1_calls: calls.d1Calls,
    rows_per_statement: inserts.rows_per_statement,
    max_statement_bytes: inserts.max_statement_bytes,
    prepare_ms: bodyRead - started,
    inside_ms: closed - opened,
    handover_ms: parsed - bodyRead,
    bind_ms: boundAt - opened,
    call_ms: calledAt - boundAt,
    read_ms: readAt - calledAt,
    d1_ms: read.durationMs,
    outcome: calls.error === null ? "ok" : "error",
    refusal: null,
    error: calls.error,
  };
}
probe.needs = ["texts", "text_of", "statement_rows", "rows_per_statement", "max_statement_bytes"];

// Every INSERT prepared and its values bound, as `db.batch()` takes them; or the exec script.
function bindAll(db, { script, texts, text_of: textOf, values, payloads }) {
  if (script !== undefined) return { script, lines: textOf.length };
  const statements = new Array(textOf.length);
  for (let k = 0; k < textOf.length; k++) {
    const statement = db.prepare(texts[textOf[k]]);
    if (values !== undefined) statements[k] = statement.bind(...values[k]);
    else if (payloads !== undefined) statements[k] = statement.bind(payloads[k]);
    else statements[k] = statement;
  }
  return { statements };
}

// Per-row: one call per statement, stopping at the first failure. Bound, literal, json and
// batched-rows: one `db.batch()`. Exec: one `db.exec()` of the script.
async function call(db, strategy, ready) {
  if (ready.script !== undefined) {
    try {
      return { sent: ready.lines, d1Calls: 1, answers: [], exec: await db.exec(ready.script), error: null };
    } catch (e) {
      return { sent: ready.lines, d1Calls: 1, answers: [], exec: null, error: errorText(e) };
    }
  }
  const { statements } = ready;
  if (strategy === "per-row") {
    const calls = { sent: 0, d1Calls: 0, answers: [], exec: null, error: null };
    for (const statement of statements) {
      calls.sent += 1;
      calls.d1Calls += 1;
      try {
        calls.answers.push(await statement.run());
      } catch (e) {
        calls.error = errorText(e);
        break;
      }
    }
    return calls;
  }
  try {
    const answers = await db.batch(statements);
    return { sent: statements.length, d1Calls: 1, answers, exec: null, error: null };
  } catch (e) {
    return { sent: statements.length, d1Calls: 1, answers: [], exec: null, error: errorText(e) };
  }
}

// `meta.changes` and `meta.duration` summed; no duration when an answer has none.
function readAnswers(answers) {
  let changes = 0;
  let durationMs = answers.length > 0 ? 0 : null;
  for (const answer of answers) {
    const meta = answer?.meta;
    if (typeof meta !== "object" || meta === null) {
      durationMs = null;
      continue;
    }
    changes += typeof meta.changes === "number" ? meta.changes : 0;
    durationMs =
      durationMs !== null && typeof meta.duration === "number" ? durationMs + meta.duration : null;
  }
  return { changes, durationMs };
}

// A `db.exec()` answer: `count` statements ran, so the rows of the first `count` planned
// statements are acknowledged; `duration` is D1's time for all of them.
function readExec(answer, statementRows) {
  const ran = typeof answer.count === "number" ? answer.count : 0;
  let changes = 0;
  for (let k = 0; k < Math.min(ran, statementRows.length); k++) changes += statementRows[k];
  return { changes, durationMs: typeof answer.duration === "number" ? answer.duration : null };
}
