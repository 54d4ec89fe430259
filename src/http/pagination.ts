import type { Context } from "hono";

/**
 * A page of search results as the API sends it: `X-Pagination-Total` (all matches) and, when more
 * follow, `X-Pagination-Next` (the offset to ask for); with `select`, only those fields.
 */
export function page<T extends object>(
  c: Context,
  items: T[],
  total: number,
  offset: number,
  select?: readonly string[],
): T[] {
  c.header("X-Pagination-Total", String(total));
  if (offset + items.length < total) c.header("X-Pagination-Next", String(offset + items.length));
  if (!select) return items;
  return items.map(
    (item) =>
      Object.fromEntries(select.filter((field) => field in item).map((field) => [field, item[field as keyof T]])) as T,
  );
}
