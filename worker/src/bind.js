// The Rust Worker's crossings into JavaScript in a probe's window, one per batch instead of one
// (or several) per statement: every statement prepared and bound in one call, and every answer
// of D1 read in one call. Imported by `probe.rs` through wasm-bindgen; plain JavaScript, bundled
// with the Worker by worker-build.

// Every INSERT prepared on `db` and its values bound, in an array as `db.batch()` takes them:
// statement `k` runs `texts[textOf[k]]` (`textOf` a Uint32Array viewing the Worker's memory)
// with the values `values[k]` (an array per statement), or nothing bound when `values` is
// undefined.
export function bindAll(db, texts, textOf, values) {
  const statements = new Array(textOf.length);
  for (let k = 0; k < textOf.length; k++) {
    const statement = db.prepare(texts[textOf[k]]);
    statements[k] = values === undefined ? statement : statement.bind(...values[k]);
  }
  return statements;
}

// D1's answers read: `meta.changes` summed, and `meta.duration` summed (NaN when there is no
// answer or one has no duration), as a Float64Array of the two.
export function readAnswers(answers) {
  let changes = 0;
  let duration = answers.length > 0 ? 0 : NaN;
  for (const answer of answers) {
    const meta = answer?.meta;
    if (typeof meta !== "object" || meta === null) {
      duration = NaN;
      continue;
    }
    changes += typeof meta.changes === "number" ? meta.changes : 0;
    duration += typeof meta.duration === "number" ? meta.duration : NaN;
  }
  return new Float64Array([changes, duration]);
}
