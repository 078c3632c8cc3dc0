// What an ORM actually sends to D1: the D1 binding wrapped so that every statement it prepares,
// the values it binds, the rows D1 says each statement changed and every D1 call (`batch`,
// `run`, `all`, `raw`, `first`, `exec`) are recorded, as the ORM Worker's probe answers them.
// The wrapper passes everything through unchanged; it adds a few property reads per statement.

// Call kinds in the order an answer lists them.
export const CALL_KINDS = ["batch", "run", "all", "raw", "first", "exec"];

// `db` counted: `{ db, log }`; `log.statements` holds one entry per statement D1 answered (or
// failed), in order: `{ insert, bound, rows }` (`rows`: `meta.changes`, null when the call's
// answer has no meta: `raw` and `first`).
export function counting(db) {
  const log = {
    statements: [],
    calls: Object.fromEntries(CALL_KINDS.map((kind) => [kind, 0])),
    durationMs: 0,
    durationKnown: true,
    firstCallAt: null,
    lastAnswerAt: null,
  };

  const call = async (kind, statements, go) => {
    log.calls[kind] += 1;
    log.firstCallAt ??= Date.now();
    let answer;
    try {
      answer = await go();
    } catch (e) {
      log.lastAnswerAt = Date.now();
      for (const s of statements) log.statements.push({ insert: s.insert, bound: s.bound, rows: 0 });
      throw e;
    }
    log.lastAnswerAt = Date.now();
    const answers = kind === "batch" ? answer : [answer];
    statements.forEach((s, k) => {
      const meta = kind === "raw" || kind === "first" ? null : answers[k]?.meta;
      const rows = typeof meta?.changes === "number" ? meta.changes : null;
      if (typeof meta?.duration === "number") log.durationMs += meta.duration;
      else log.durationKnown = false;
      log.statements.push({ insert: s.insert, bound: s.bound, rows });
    });
    return answer;
  };

  class Counted {
    constructor(inner, sql, bound) {
      this.inner = inner;
      this.sql = sql;
      this.insert = /^\s*insert\b/i.test(sql);
      this.bound = bound;
    }
    bind(...values) {
      return new Counted(this.inner.bind(...values), this.sql, values.length);
    }
    run() {
      return call("run", [this], () => this.inner.run());
    }
    all() {
      return call("all", [this], () => this.inner.all());
    }
    raw(options) {
      return call("raw", [this], () => this.inner.raw(options));
    }
    first(column) {
      return call("first", [this], () => this.inner.first(column));
    }
  }

  const counted = {
    prepare: (sql) => new Counted(db.prepare(sql), sql, 0),
    batch: (statements) =>
      call("batch", statements, () => db.batch(statements.map((s) => s.inner))),
    exec: (script) => call("exec", [{ insert: /^\s*insert\b/i.test(script), bound: 0 }], () => db.exec(script)),
    dump: () => db.dump(),
  };
  return { db: counted, log };
}

// What the log says was sent, as the probe answers it (`sent`): INSERT statements, the rows each
// changed and the values each bound, other statements, and the D1 calls by kind.
export function sent(log) {
  const inserts = log.statements.filter((s) => s.insert);
  const rows = inserts.map((s) => s.rows ?? 0);
  return {
    statements: inserts.length,
    other_statements: log.statements.length - inserts.length,
    rows: rows.reduce((a, b) => a + b, 0),
    rows_per_statement: Math.max(0, ...rows),
    bound_values: inserts.reduce((a, s) => a + s.bound, 0),
    bound_per_statement: Math.max(0, ...inserts.map((s) => s.bound)),
    calls: log.calls,
  };
}
