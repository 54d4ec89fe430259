// The limits guard's reading of SQL text (src/limits-guard/sql-text.ts): which function calls have too
// many arguments, and which bound parameters make up each row a statement writes.
import { describe, expect, it } from "vitest";
import { sqlShape } from "../../src/limits-guard/sql-text.ts";
import { statementError, valueBytes } from "../../src/limits-guard/sql-values.ts";

const list = (n: number, item = "?") => Array.from({ length: n }, () => item).join(", ");

describe("function arguments", () => {
  it("finds a call of more than 32 arguments, at any depth", () => {
    expect(sqlShape(`SELECT json_object(${list(33)})`).tooManyArguments).toBe("json_object");
    expect(sqlShape(`SELECT json_object(${list(32)})`).tooManyArguments).toBeNull();
    expect(sqlShape(`SELECT a FROM t WHERE x = coalesce(b, MAX(${list(40, "1")}))`).tooManyArguments).toBe("max");
    expect(sqlShape(`SELECT f(g(${list(31)}), ${list(32)})`).tooManyArguments).toBe("f");
  });

  it("does not count commas in literals, quoted names, comments, nested calls or subqueries", () => {
    const quoted = `SELECT json_array(${list(28)}, 'a, b, c, ${list(40)}', "x,y", [z,w], \`q,r\`) -- ${list(40)}`;
    expect(sqlShape(quoted).tooManyArguments).toBeNull();
    expect(sqlShape(`SELECT f(/* ${list(40)} */ ?)`).tooManyArguments).toBeNull();
    expect(sqlShape(`SELECT f(g(${list(40, "1")}))`).tooManyArguments).toBe("g");
    expect(sqlShape(`SELECT f((SELECT ${list(40, "1")}))`).tooManyArguments).toBeNull();
    expect(sqlShape(`SELECT 'it''s (a, b' || f(${list(3)})`).tooManyArguments).toBeNull();
    expect(sqlShape(`SELECT x'00ff' , f(${list(33)})`).tooManyArguments).toBe("f");
  });

  it("does not take column lists, IN lists, VALUES tuples or table definitions for calls", () => {
    const columns = Array.from({ length: 40 }, (_, i) => `c${i}`).join(", ");
    expect(sqlShape(`INSERT INTO t (${columns}) VALUES (${list(40)}), (${list(40)})`).tooManyArguments).toBeNull();
    expect(sqlShape(`INSERT OR REPLACE INTO "t" (${columns}) VALUES (${list(40)})`).tooManyArguments).toBeNull();
    expect(sqlShape(`CREATE TABLE IF NOT EXISTS t (${columns})`).tooManyArguments).toBeNull();
    expect(sqlShape(`CREATE TABLE t (${columns}, PRIMARY KEY (${columns}))`).tooManyArguments).toBeNull();
    expect(sqlShape(`CREATE INDEX i ON t (${columns})`).tooManyArguments).toBeNull();
    expect(sqlShape(`SELECT * FROM t WHERE a IN (${list(90)}) AND b NOT IN (${list(40)})`).tooManyArguments).toBeNull();
    expect(sqlShape(`SELECT * FROM t WHERE EXISTS (SELECT ${columns})`).tooManyArguments).toBeNull();
    expect(sqlShape(`INSERT INTO t (a) VALUES (?) ON CONFLICT (${columns}) DO NOTHING`).tooManyArguments).toBeNull();
  });
});

describe("rows written", () => {
  it("groups the parameters of each VALUES tuple, of an upsert's update, of an UPDATE", () => {
    expect(sqlShape("SELECT ?, ?").rows).toBeNull();
    expect(sqlShape("DELETE FROM t WHERE a = ?").rows).toBeNull();
    expect(sqlShape("INSERT INTO t (a, b) VALUES (?, ?), (?, json(?))").rows).toEqual([
      [0, 1],
      [2, 3],
    ]);
    // An upsert stores either a tuple or its update, never both.
    expect(sqlShape("INSERT INTO t (a, b) VALUES (?, ?), (?, ?) ON CONFLICT (a) DO UPDATE SET b = ?").rows).toEqual([
      [0, 1],
      [2, 3],
      [4],
    ]);
    expect(sqlShape("UPDATE t SET a = ?, b = ? WHERE id = ?").rows).toEqual([[0, 1, 2]]);
    expect(sqlShape("INSERT INTO t SELECT value FROM json_each(?)").rows).toEqual([[0]]);
    expect(sqlShape("REPLACE INTO t VALUES (?1, ?2, ?1)").rows).toEqual([[0, 1, 0]]);
  });

  it("refuses a statement whose row or value is over 2,000,000 bytes", () => {
    const half = "a".repeat(1_000_001);
    expect(statementError("d1", "INSERT INTO t VALUES (?, ?)", [half, half])?.message).toBe(
      "D1_ERROR: string or blob too big: SQLITE_TOOBIG",
    );
    expect(statementError("d1", "INSERT INTO t VALUES (?), (?)", [half, half])).toBeNull();
    expect(statementError("d1", "SELECT ? = ?", [half, half])).toBeNull();
    const upsert = "INSERT INTO t (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = ?";
    expect(statementError("d1", upsert, ["k", half, half])).toBeNull();
    expect(statementError("durable-object", "SELECT ?", ["b".repeat(2_000_001)])?.message).toBe(
      "string or blob too big: SQLITE_TOOBIG",
    );
    expect(statementError("durable-object", "SELECT ?", [new Uint8Array(2_000_000)])).toBeNull();
  });

  it("counts text in UTF-8 bytes", () => {
    expect(valueBytes("a".repeat(10))).toBe(10);
    expect(valueBytes("é".repeat(700_000))).toBe(1_400_000);
    expect(valueBytes("€".repeat(700_000))).toBe(2_100_000);
    expect(valueBytes("😀".repeat(600_000))).toBe(2_400_000);
    expect(valueBytes(new ArrayBuffer(12))).toBe(12);
  });
});
