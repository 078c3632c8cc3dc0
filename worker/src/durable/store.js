// The Durable Object target's statements run on the object's own SQLite storage
// (`ctx.storage.sql`), in one call from Rust, as `bind.js` does for D1's binding: from Rust each
// statement and each bound value would be a crossing. Imported by `object.rs` through
// wasm-bindgen; plain JavaScript, bundled with the Worker by worker-build.

// Statement `k` runs `texts[textOf[k]]` with the values `values[k]` (an array per statement),
// or nothing bound when `values` is undefined or null. `transaction`: all of them inside one
// `transactionSync` (rolled back whole when one fails), as D1's `db.batch()` is; otherwise
// each statement on its own, the ones before a failure kept. Every cursor is read to its end,
// so each statement has run when this returns. Answers `[ran, error]`: the statements that ran
// and were kept, and the error's message (null when none failed).
export function runStatements(storage, texts, textOf, values, transaction) {
  const sql = storage.sql;
  const bound = values !== undefined && values !== null;
  let ran = 0;
  const each = () => {
    for (let k = 0; k < textOf.length; k++) {
      const cursor = bound ? sql.exec(texts[textOf[k]], ...values[k]) : sql.exec(texts[textOf[k]]);
      for (const _ of cursor) {
        // read to the end: the statement has run
      }
      ran += 1;
    }
  };
  try {
    if (transaction) {
      storage.transactionSync(each);
    } else {
      each();
    }
    return [ran, null];
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return [transaction ? 0 : ran, message];
  }
}

// Runs one SELECT (`values`: its bound values, an array) and counts the UTF-8 bytes of the text
// column `column` of every row as the rows come back, one at a time. Answers `[bytes, error]`.
export function readTextBytes(storage, text, values, column) {
  const encoder = new TextEncoder();
  let bytes = 0;
  try {
    for (const row of storage.sql.exec(text, ...values)) {
      const value = row[column];
      if (typeof value === "string") {
        bytes += encoder.encode(value).length;
      }
    }
    return [bytes, null];
  } catch (e) {
    return [0, e instanceof Error ? e.message : String(e)];
  }
}
