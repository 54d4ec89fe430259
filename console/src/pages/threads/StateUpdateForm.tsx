import { type FormEvent, useId, useState } from "react";
import { ErrorBox } from "../../components/ErrorBox.tsx";
import { type JsonObject, parseJsonObject } from "../../json-input.ts";
import { changedKeys } from "./values.ts";

export interface StateUpdate {
  values: JsonObject;
  asNode: string | undefined;
  /** Which submit button was used (e.g. "fork" or "fork-run"). */
  action: string;
}

/**
 * Values as editable JSON plus an optional "as node". Only the top-level keys that were changed are
 * submitted, because an update goes through the graph's reducers. Bad JSON is reported here and
 * nothing is sent.
 */
export function StateUpdateForm({
  original,
  nodes,
  actions,
  onSubmit,
  label,
}: {
  original: unknown;
  /** The graph's nodes, or undefined when unknown (the field is then free text). */
  nodes: string[] | undefined;
  actions: { id: string; label: string; secondary?: boolean }[];
  onSubmit: (update: StateUpdate) => Promise<void>;
  label: string;
}) {
  const id = useId();
  const [text, setText] = useState(() => JSON.stringify(original ?? {}, null, 2));
  const [asNode, setAsNode] = useState("");
  const [inputError, setInputError] = useState<string>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const parsed = parseJsonObject(text, "Values");
  const removed = "value" in parsed ? changedKeys(original, parsed.value).removed : [];

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const submitter = (event.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null;
    const action = submitter?.value || actions[0].id;
    if ("error" in parsed) {
      setInputError(parsed.error);
      return;
    }
    setInputError(undefined);
    setError(undefined);
    setBusy(true);
    try {
      await onSubmit({
        values: changedKeys(original, parsed.value).update,
        asNode: asNode.trim() || undefined,
        action,
      });
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="state-update" onSubmit={submit} aria-label={label}>
      <label>
        Values (JSON)
        <textarea
          value={text}
          onChange={(event) => {
            setText(event.target.value);
            setInputError(undefined);
          }}
          rows={Math.min(18, Math.max(5, text.split("\n").length + 1))}
          spellCheck={false}
          aria-invalid={inputError ? true : undefined}
          aria-describedby={`${id}-hint`}
        />
      </label>
      <p className="muted small" id={`${id}-hint`}>
        Only the keys you change are sent, and each goes through its channel's reducer (a list that appends gets the new
        list appended).
        {removed.length > 0 ? ` Removed keys (${removed.join(", ")}) stay as they are: set them to null instead.` : ""}
      </p>
      <div className="row">
        <label htmlFor={`${id}-as-node`}>
          As node
          {nodes && nodes.length > 0 ? (
            <select id={`${id}-as-node`} value={asNode} onChange={(event) => setAsNode(event.target.value)}>
              <option value="">(automatic)</option>
              {nodes.map((node) => (
                <option key={node} value={node}>
                  {node}
                </option>
              ))}
            </select>
          ) : (
            <input
              id={`${id}-as-node`}
              value={asNode}
              onChange={(event) => setAsNode(event.target.value)}
              placeholder="(automatic)"
            />
          )}
        </label>
        {actions.map((action) => (
          <button
            key={action.id}
            type="submit"
            value={action.id}
            className={action.secondary ? "secondary" : undefined}
            disabled={busy}
          >
            {action.label}
          </button>
        ))}
      </div>
      {inputError ? (
        <div className="error" role="alert">
          {inputError}
        </div>
      ) : null}
      <ErrorBox error={error} />
    </form>
  );
}
