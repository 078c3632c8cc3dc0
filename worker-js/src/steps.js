// What d1bench's two JavaScript Workers share, the twin (`index.js`) and the minimal one
// (`minimal.js`): the bearer token, JSON answers, D1's error text, and the steps around the
// measured window, `POST /setup` and `POST /verify`, whose SQL the host planned. Nothing here runs
// inside a window. Bundled into each Worker by wrangler, as its own module.

export function checkToken(request, env) {
  const expected = env.BENCH_TOKEN;
  if (typeof expected !== "string" || expected === "") {
    return error(500, "the Worker has no BENCH_TOKEN configured");
  }
  const given = request.headers.get("Authorization") ?? "";
  const token = given.startsWith("Bearer ") ? given.slice(7) : "";
  let diff = token.length ^ expected.length;
  for (let i = 0; i < expected.length; i++) {
    diff |= expected.charCodeAt(i) ^ token.charCodeAt(i % Math.max(token.length, 1));
  }
  return diff === 0 ? null : error(401, "missing or wrong bearer token");
}

export function json(value, status = 200) {
  return new Response(JSON.stringify(value), {
    status,
    headers: { "Content-Type": "application/json" },
  });
}

export function error(status, text, field) {
  return json(field === undefined ? { error: text } : { error: text, field }, status);
}

// D1's error text with its cause, as the Rust Worker words it.
export function errorText(e) {
  if (!(e instanceof Error)) return String(e);
  const message = e.message;
  if (!message.startsWith("D1")) return message;
  const cause = e.cause instanceof Error ? e.cause.message : "unknown error";
  return cause === "unknown error" || message.includes(cause)
    ? message
    : `${message} (cause: ${cause})`;
}

// `POST /setup`: the probe's table and indexes in one batch; a refusal is answered as data.
export async function setup(db, { probe, setup }) {
  let error = null;
  try {
    await db.batch(setup.map((sql) => db.prepare(sql)));
  } catch (e) {
    error = errorText(e);
  }
  return { probe_id: probe.probe_id, error };
}
setup.needs = ["setup"];

// `POST /verify`: whether the table exists; if it does, its rows counted, their checksum
// computed in SQL and the table dropped, as the Rust Worker does.
export async function verify(db, { probe, verification }) {
  const count = async (sql) => {
    const [answer] = await db.batch([db.prepare(sql)]);
    return answer.results?.[0]?.n ?? 0;
  };
  const missing = { probe_id: probe.probe_id, table_exists: false, rows_present: 0, checksum: null };
  if ((await count(verification.exists)) === 0) return missing;
  const rows_present = await count(verification.count);
  const [sums] = await db.batch([
    db.prepare(verification.checksum),
    db.prepare(verification.teardown),
  ]);
  if (sums.results?.length !== 1) {
    throw new Error(`the checksum answered ${sums.results?.length ?? 0} rows, not 1`);
  }
  return { ...missing, table_exists: true, rows_present, checksum: sums.results[0] };
}
verify.needs = ["verification"];

// A Worker's `fetch`: the token checked, `GET /health` answered with `identity`, and the three
// steps routed, each body read and parsed on `Date.now()` before the step runs (`probe` gets
// those instants: its window opens after them).
export async function serve(request, env, identity, probe) {
  const denied = checkToken(request, env);
  if (denied) return denied;
  const { pathname } = new URL(request.url);
  const route = `${request.method} ${pathname}`;
  if (route === "GET /health") return json(identity);
  const handler = { "POST /setup": setup, "POST /probe": probe, "POST /verify": verify }[route];
  if (!handler) return error(404, `no route ${route} in the JavaScript Worker`);
  const started = Date.now();
  let body;
  let bodyRead;
  let parsed;
  try {
    const text = await request.text();
    bodyRead = Date.now();
    body = JSON.parse(text);
    parsed = Date.now();
  } catch (e) {
    return error(400, `invalid probe: ${e.message}`);
  }
  const missing = ["probe", ...handler.needs].find((key) => body?.[key] === undefined);
  if (missing) return error(400, `invalid probe: missing \`${missing}\``, missing);
  try {
    return json(await handler(env.DB, body, { started, bodyRead, parsed }));
  } catch (e) {
    return error(500, `probe ${body.probe.probe_id} failed outside its writes: ${errorText(e)}`);
  }
}
