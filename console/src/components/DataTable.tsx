import type { ReactNode } from "react";
import { Empty, ErrorBox, Loading } from "./ErrorBox.tsx";

/**
 * A loaded list as a table: the error (if any), "Loading…" until the first answer, the empty text
 * when there are no rows, else the table named `label` (what the tests and screen readers find it by).
 * `columns` are the header texts ("" for a column of buttons); `children` renders one row.
 */
export function DataTable<T>({
  label,
  columns,
  rows,
  loading = false,
  error,
  empty,
  children,
}: {
  label: string;
  columns: string[];
  rows: T[] | undefined;
  loading?: boolean;
  error?: unknown;
  empty: ReactNode;
  children: (row: T) => ReactNode;
}) {
  return (
    <>
      <ErrorBox error={error} />
      {loading && !rows ? <Loading /> : null}
      {rows && rows.length === 0 ? <Empty>{empty}</Empty> : null}
      {rows && rows.length > 0 ? (
        <div className="table-wrap">
          <table className="table" aria-label={label}>
            <thead>
              <tr>
                {columns.map((column) => (
                  <th key={column}>{column}</th>
                ))}
              </tr>
            </thead>
            <tbody>{rows.map(children)}</tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}
