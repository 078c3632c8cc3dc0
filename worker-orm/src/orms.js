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

import { drizzle } from "drizzle-orm/d1";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { Kysely } from "kysely";
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

// `{ ready, write, after }`: `ready(db)` before the window (the library's client on the
// binding `db`), then `write(rows)` timed, then `after()` outside the window.
export const LIBRARIES = {
  drizzle: {
    async ready(db, { table, columns }) {
      const t = sqliteTable(
        table,
        Object.fromEntries(
          columns.map(([name, type]) => [name, type === "integer" ? integer(name) : text(name)]),
        ),
      );
      const orm = drizzle(db);
      return {
        write: async (rows) => {
          const inserts = chunks(rows, chunkRows(columns.length)).map((chunk) =>
            orm.insert(t).values(chunk),
          );
          await orm.batch(inserts);
        },
        after: async () => {},
      };
    },
  },
  kysely: {
    async ready(db, { table, columns }) {
      const orm = new Kysely({ dialect: new D1Dialect({ database: db }) });
      return {
        write: async (rows) => {
          for (const chunk of chunks(rows, chunkRows(columns.length))) {
            await orm.insertInto(table).values(chunk).execute();
          }
        },
        after: async () => {},
      };
    },
  },
  prisma: {
    async ready(db, { table, columns }, raw) {
      const model = `c${columns.length}`;
      const mapped = `prisma_c${columns.length}`;
      const prisma = new PrismaClient({ adapter: new PrismaD1(db) });
      if (prisma[model] === undefined) {
        throw new Error(`prisma/schema.prisma has no model C${columns.length}`);
      }
      await prisma.$connect();
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
