import { ErrorBox } from "../../components/ErrorBox.tsx";
import { filterErrorPosition } from "./tracing-api.ts";

/**
 * A filter the API refused, with the parser's position marked in the text: the offending character
 * highlighted and a caret under it (past the end when the filter stopped too early).
 */
export function FilterErrorView({ error, filter }: { error: unknown; filter: string }) {
  const position = filterErrorPosition(error);
  if (position === undefined) return <ErrorBox error={error} title="Query" />;
  // Line breaks and tabs shown as spaces, so the caret stays under its character.
  const shown = filter.replace(/[\n\r\t]/g, " ");
  const at = Math.min(position, shown.length);
  const before = shown.slice(0, at);
  const marked = shown.slice(at, at + 1);
  const after = shown.slice(at + 1);
  return (
    <section className="filter-error" aria-label="Filter error">
      <ErrorBox error={error} title="Filter" />
      <div className="filter-error-text">
        <span className="muted">
          at position <strong data-testid="filter-error-position">{position}</strong> (character {position + 1} of{" "}
          {filter.length})
        </span>
        <pre className="filter-marked" data-position={position}>
          {before}
          <mark data-testid="filter-error-mark">{marked || " "}</mark>
          {after}
          {"\n"}
          <span className="filter-caret" aria-hidden="true">
            {`${" ".repeat(at)}^`}
          </span>
        </pre>
      </div>
    </section>
  );
}
