// The three libraries' bulk inserts, each written the way its own documentation and its users
// write many rows to D1, on a binding the caller may have wrapped (`counting.js`):
// - drizzle: `db.insert(t).values(chunk)`, chunks of floor(100 / C) rows (D1's 100 bound
//   parameters, the workaround of drizzle-orm#2479), all chunks in one `db.batch([...])`;
// - kysely (kysely-d1): `db.insertInto(t).values(chunk).execute()`, the same chunks, one after
//   the other (kysely-d1 has no batch and no transactions);
// - prisma (7, `@prisma/adapter-d1`): `prisma.<model>.createMany({ data: rows })`; Prisma splits
//   the rows itself. Its client is generated from `prisma/schema.prisma` (one model per column
//   count, each mapped to the table `prisma_c<C>`), so the probe's table takes that name for
//   the writes: renamed before the window and back after it, outside every clock.
//
// Each library's setup (its client, the table's description) is made before the window opens:
// an application makes them once, not per insert.
//
// Beside each documented idiom, `json-each`: the same library's raw-SQL API sending the `json`
// strategy's statement, `INSERT INTO t (c0, ...) SELECT value->>0, ... FROM json_each(?)`, the
// rows as one JSON array bound as its one parameter, 500 rows a statement (under D1's 2 MB a
// string for rows up to about 4 KB): drizzle's `db.insert(t).select(sql...)` all in one
// `db.batch`, Kysely's
// `sql...execute(db)` and Prisma's `$executeRawUnsafe(text, json)` one call each. What `advise`
// shows as the sample of each library (`xtask/src/base/orm.rs`).

import { sql as drizzleSql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { Kysely, sql as kyselySql } from "kysely";
import { D1Dialect } from "kysely-d1";
import { PrismaD1 } from "@prisma/adapter-d1";
import { PrismaClient } from "../generated/prisma/client.ts";

// D1's documented most bound parameters of one statement.
const MAX_BOUND_PARAMETERS = 100;

// Rows per chunk as users chunk them: as many rows as fit D1's bound parameters.
export function chunkRows(columns) {
  return Math.max(1, Math.floor(MAX_BOUND_PARAMETERS / columns));
}

function chunks(rows, size) {
  const out = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

// Rows a `json-each` statement carries.
export const JSON_EACH_ROWS = 500;

// The `json` strategy's statement text for `table` and its column names.
function jsonEachInsert(table, names) {
  const values = names.map((_, j) => `value->>${j}`).join(", ");
  return `INSERT INTO ${table} (${names.join(", ")}) SELECT ${values} FROM json_each(?)`;
}

// Each chunk's rows as one JSON array of arrays, in the columns' order.
function jsonChunks(rows, names) {
  return chunks(rows, JSON_EACH_ROWS).map((chunk) =>
    JSON.stringify(chunk.map((row) => names.map((name) => row[name]))),
  );
}

// `{ ready, write, after }`: `ready(db)` before the window (the library's client on the
// binding `db`), then `write(rows)` timed, then `after()` outside the window.
export const LIBRARIES = {
  drizzle: {
    async ready(db, { table, columns, idiom }) {
      const t = sqliteTable(
        table,
        Object.fromEntries(
          columns.map(([name, type]) => [name, type === "integer" ? integer(name) : text(name)]),
        ),
      );
      const orm = drizzle(db);
      const names = columns.map(([name]) => name);
      const documented = async (rows) => {
        const inserts = chunks(rows, chunkRows(columns.length)).map((chunk) =>
          orm.insert(t).values(chunk),
        );
        await orm.batch(inserts);
      };
      // `db.insert(t).select(sql...)`: an insert builder, so `db.batch` takes it (a raw
      // `db.run(sql...)` with a parameter fails inside drizzle's D1 batch, 0.45.4: "Cannot read
      // properties of undefined (reading 'bind')").
      const select = `SELECT ${names.map((_, j) => `value->>${j}`).join(", ")} FROM json_each(`;
      const jsonEach = async (rows) => {
        const inserts = jsonChunks(rows, names).map((json) =>
          orm.insert(t).select(drizzleSql`${drizzleSql.raw(select)}${json})`),
        );
        await orm.batch(inserts);
      };
      return { write: idiom === "json-each" ? jsonEach : documented, after: async () => {} };
    },
  },
  kysely: {
    async ready(db, { table, columns, idiom }) {
      const orm = new Kysely({ dialect: new D1Dialect({ database: db }) });
      const names = columns.map(([name]) => name);
      const documented = async (rows) => {
        for (const chunk of chunks(rows, chunkRows(columns.length))) {
          await orm.insertInto(table).values(chunk).execute();
        }
      };
      const [before, after] = jsonEachInsert(table, names).split("?");
      const jsonEach = async (rows) => {
        for (const json of jsonChunks(rows, names)) {
          await kyselySql`${kyselySql.raw(before)}${json}${kyselySql.raw(after)}`.execute(orm);
        }
      };
      return { write: idiom === "json-each" ? jsonEach : documented, after: async () => {} };
    },
  },
  prisma: {
    async ready(db, { table, columns, idiom }, raw) {
      const model = `c${columns.length}`;
      const mapped = `prisma_c${columns.length}`;
      const prisma = new PrismaClient({ adapter: new PrismaD1(db) });
      if (prisma[model] === undefined) {
        throw new Error(`prisma/schema.prisma has no model C${columns.length}`);
      }
      await prisma.$connect();
      if (idiom === "json-each") {
        // Raw SQL names the probe's own table: no model, no renaming.
        const names = columns.map(([name]) => name);
        const text = jsonEachInsert(table, names);
        return {
          write: async (rows) => {
            for (const json of jsonChunks(rows, names)) {
              await prisma.$executeRawUnsafe(text, json);
            }
          },
          after: async () => {},
        };
      }
      await raw.batch([
        raw.prepare(`DROP TABLE IF EXISTS ${mapped}`),
        raw.prepare(`ALTER TABLE ${table} RENAME TO ${mapped}`),
      ]);
      return {
        write: async (rows) => {
          await prisma[model].createMany({ data: rows });
        },
        after: async () => {
          await raw.prepare(`ALTER TABLE ${mapped} RENAME TO ${table}`).run();
        },
      };
    },
  },
};
