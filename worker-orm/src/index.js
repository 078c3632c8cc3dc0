// d1bench's ORM Worker (`--worker js-orm`): the JavaScript Worker (`worker-js/`) and beside it
// the bulk inserts of three libraries users write to D1 with (Drizzle, Prisma 7, Kysely), so
// that both run in one Worker, on one runtime and one binding, interleaved in one run.
//
// Routes: everything but `POST /orm/probe` and `GET /health` is the JavaScript Worker's own
// `fetch`, unchanged: `/setup`, `/probe` (the six strategies) and `/verify` run exactly its code.
// `POST /orm/probe` takes the JavaScript Worker's probe body of the rows as single-row
// statements (`values`: one array per row) plus `orm` (`library`, `table`, `columns`: each
// `[name, "text" | "integer"]`), writes the rows as objects with that library's idiom
// (`orms.js`) through a counting wrapper of the binding (`counting.js`), and answers
// `{ result, sent }`: the probe result as the JavaScript Worker answers it, and what the library
// sent to D1. The clocks are the JavaScript Worker's: the window opens after the library's client
// is ready and the rows are objects; `bind_ms` runs until the library's first D1 call (building
// its SQL), `call_ms` until the last answer arrived, `read_ms` until the library returned.
//
// All routes need `Authorization: Bearer <BENCH_TOKEN>`. Bundled by wrangler (esbuild) with the
// libraries pinned in `worker-orm/package.json`.

import javascript from "../../worker-js/src/index.js";
import { errorText, serve } from "../../worker-js/src/steps.js";
import { counting, sent } from "./counting.js";
import { LIBRARIES } from "./orms.js";

const NAME = "d1bench-worker-orm";
// The workspace's version (Cargo.toml).
const VERSION = "0.1.0";
const IDENTITY = { name: NAME, version: VERSION };

export default {
  fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/health") return serve(request, env, IDENTITY, ormProbe);
    if (url.pathname !== "/orm/probe") return javascript.fetch(request, env);
    url.pathname = "/probe";
    return serve(new Request(url, request), env, IDENTITY, ormProbe);
  },
};

// `POST /orm/probe`: the rows written by one library, timed, and what it sent.
async function ormProbe(raw, body, { started, bodyRead, parsed }) {
  const { probe, values, orm } = body;
  const library = LIBRARIES[orm.library];
  if (library === undefined) throw new Error(`no library \`${orm.library}\` in the ORM Worker`);
  const names = orm.columns.map(([name]) => name);
  const rows = values.map((row) => Object.fromEntries(names.map((name, j) => [name, row[j]])));
  const objectsMade = Date.now();
  const { db, log } = counting(raw);
  const ready = await library.ready(db, orm, raw);

  const opened = Date.now();
  let error = null;
  try {
    await ready.write(rows);
  } catch (e) {
    error = errorText(e);
  }
  const closed = Date.now();
  try {
    await ready.after();
  } catch (e) {
    error = error ?? `after the writes: ${errorText(e)}`;
  }
  const what = sent(log);
  const firstCall = log.firstCallAt ?? closed;
  const lastAnswer = log.lastAnswerAt ?? firstCall;
  const totalCalls = Object.values(what.calls).reduce((a, b) => a + b, 0);
  return {
    result: {
      probe_id: probe.probe_id,
      strategy: probe.strategy,
      columns: probe.columns,
      row_bytes: probe.row_bytes,
      rows_expected: what.rows,
      statements_planned: what.statements,
      statements_sent: what.statements,
      d1_calls: totalCalls,
      rows_per_statement: what.rows_per_statement,
      max_statement_bytes: 0,
      prepare_ms: bodyRead - started,
      inside_ms: closed - opened,
      handover_ms: objectsMade - bodyRead,
      bind_ms: firstCall - opened,
      call_ms: lastAnswer - firstCall,
      read_ms: closed - lastAnswer,
      d1_ms: log.durationKnown && log.statements.length > 0 ? log.durationMs : null,
      outcome: error === null ? "ok" : "error",
      refusal: null,
      error,
    },
    sent: what,
  };
}
ormProbe.needs = ["values", "orm"];
