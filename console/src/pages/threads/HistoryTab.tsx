import type { Config, Run, ThreadState } from "@langchain/langgraph-sdk";
import { useState } from "react";
import { Link } from "wouter";
import { langGraphClient } from "../../api.ts";
import { Empty, ErrorBox, Loading } from "../../components/ErrorBox.tsx";
import { JsonTree } from "../../components/JsonTree.tsx";
import { StatusBadge } from "../../components/StatusBadge.tsx";
import { formatTime, shortId } from "../../format.ts";
import { useLoad } from "../../hooks.ts";
import { StateUpdateForm } from "./StateUpdateForm.tsx";
import { checkpointNode, diffValues } from "./values.ts";

const PAGE = 50;

/**
 * The id of the checkpoint a state update created. The server answers `{checkpoint}` as LangGraph
 * Platform does; the SDK's type says `{configurable}`, so both are read.
 */
export function newCheckpointId(result: Pick<Config, "configurable"> | { checkpoint?: { checkpoint_id?: string } }) {
  if ("checkpoint" in result && result.checkpoint?.checkpoint_id) return result.checkpoint.checkpoint_id;
  const configurable = "configurable" in result ? result.configurable : undefined;
  return typeof configurable?.checkpoint_id === "string" ? configurable.checkpoint_id : undefined;
}

interface ForkResult {
  from: ThreadState;
  checkpointId: string;
  run?: Run;
  /** The fork succeeded but its run did not start. */
  runError?: unknown;
}

/** Checkpoints newest first: the step, the node that wrote it, what changed from its parent; fork from any. */
export function HistoryTab({
  threadId,
  assistantId,
  nodes,
  version,
  onChange,
}: {
  threadId: string;
  assistantId: string | undefined;
  nodes: string[] | undefined;
  version: number;
  onChange: () => void;
}) {
  const [limit, setLimit] = useState(PAGE);
  const [forking, setForking] = useState<string>();
  const [forked, setForked] = useState<ForkResult>();
  const { data, error, loading, reload } = useLoad(
    (signal) => langGraphClient().threads.getHistory(threadId, { limit, signal }),
    [threadId, limit, version],
  );

  const fork = async (from: ThreadState, values: Record<string, unknown>, asNode: string | undefined, run: boolean) => {
    const client = langGraphClient();
    const result = await client.threads.updateState(threadId, {
      values,
      checkpointId: from.checkpoint.checkpoint_id ?? undefined,
      asNode,
    });
    const checkpointId = newCheckpointId(result);
    let started: Run | undefined;
    let runError: unknown;
    if (run && assistantId && !checkpointId) {
      runError = new Error("The server did not say which checkpoint the fork created, so no run was started");
    } else if (run && assistantId) {
      // Runs from the new branch: no input, the checkpoint's own next nodes go on.
      try {
        started = await client.runs.create(threadId, assistantId, { input: null, checkpointId });
      } catch (reason) {
        runError = reason;
      }
    }
    setForked({ from, checkpointId: checkpointId ?? "(not reported)", run: started, runError });
    setForking(undefined);
    onChange();
  };

  if (error) return <ErrorBox error={error} />;
  if (loading && !data) return <Loading />;
  if (!data) return null;
  if (data.length === 0) return <Empty>This thread has no checkpoints yet.</Empty>;
  const byId = new Map(data.map((state) => [state.checkpoint.checkpoint_id, state]));
  return (
    <div className="history">
      <div className="row history-actions">
        <span className="muted">
          {data.length} checkpoint{data.length === 1 ? "" : "s"}, newest first
        </span>
        <button type="button" className="secondary" onClick={reload} disabled={loading}>
          Refresh
        </button>
      </div>
      {forked ? (
        <div className="card fork-result" role="status">
          Forked from step {String(forked.from.metadata?.step ?? "?")} (
          <code>{shortId(forked.from.checkpoint.checkpoint_id)}</code>): new checkpoint{" "}
          <code data-testid="fork-checkpoint">{forked.checkpointId}</code>
          {forked.run ? (
            <>
              {" "}
              · run <code>{forked.run.run_id}</code> <StatusBadge status={forked.run.status} />{" "}
              <Link href={`/traces/agent-runs/${forked.run.run_id}`}>trace</Link>
            </>
          ) : null}
          <ErrorBox error={forked.runError} title="The run did not start" />
        </div>
      ) : null}
      <ol className="timeline" aria-label="Checkpoints">
        {data.map((state, index) => {
          const id = state.checkpoint.checkpoint_id ?? String(index);
          const parentId = state.parent_checkpoint?.checkpoint_id ?? undefined;
          const parent = parentId ? byId.get(parentId) : undefined;
          const node = checkpointNode(state, parent);
          const step = state.metadata?.step;
          const older = data[index + 1];
          // A parent that isn't the next older entry means this checkpoint starts (or continues) a branch.
          const branches = parent && older && older.checkpoint.checkpoint_id !== parentId;
          const changes = parent ? diffValues(parent.values, state.values) : undefined;
          const interrupted = state.tasks.some((task) => (task.interrupts ?? []).length > 0);
          return (
            <li key={id} className="checkpoint" data-checkpoint-id={id} aria-label={`Step ${String(step)}: ${node}`}>
              <div className="checkpoint-head">
                <span className="step" title="metadata.step">
                  step {typeof step === "number" ? step : "?"}
                </span>
                <strong className="node-name">{node}</strong>
                {index === 0 ? <span className="badge badge-ok">current</span> : null}
                {interrupted ? <span className="badge badge-warn">interrupted</span> : null}
                <span className="muted">{formatTime(state.created_at)}</span>
                <code className="muted" title={id}>
                  {shortId(id)}
                </code>
                <button
                  type="button"
                  className="secondary fork-button"
                  aria-expanded={forking === id}
                  onClick={() => setForking(forking === id ? undefined : id)}
                >
                  {forking === id ? "Close" : "Fork…"}
                </button>
              </div>
              {branches ? (
                <div className="muted small">
                  ↳ branches from <code>{shortId(parentId)}</code> (step {String(parent.metadata?.step ?? "?")})
                </div>
              ) : null}
              {state.next.length > 0 ? <div className="muted small">next: {state.next.join(", ")}</div> : null}
              <Changes changes={changes} hasParent={Boolean(parentId)} />
              <details className="checkpoint-values">
                <summary>Values</summary>
                <JsonTree value={state.values} openDepth={1} />
              </details>
              {forking === id ? (
                <div className="fork-form">
                  <StateUpdateForm
                    label={`Fork from step ${String(step)}`}
                    original={state.values}
                    nodes={nodes}
                    actions={[
                      { id: "fork", label: "Fork" },
                      ...(assistantId ? [{ id: "fork-run", label: "Fork and run", secondary: true }] : []),
                    ]}
                    onSubmit={({ values, asNode, action }) => fork(state, values, asNode, action === "fork-run")}
                  />
                </div>
              ) : null}
            </li>
          );
        })}
      </ol>
      {data.length >= limit ? (
        <button type="button" className="secondary" onClick={() => setLimit(limit + PAGE)}>
          Load older checkpoints
        </button>
      ) : null}
    </div>
  );
}

function Changes({ changes, hasParent }: { changes: ReturnType<typeof diffValues> | undefined; hasParent: boolean }) {
  if (!hasParent) return <div className="changes muted small">first checkpoint</div>;
  if (!changes) return <div className="changes muted small">parent not loaded</div>;
  if (changes.length === 0) return <div className="changes muted small">no value changes</div>;
  return (
    <ul className="changes" aria-label="Changes">
      {changes.map((change) => (
        <li key={change.key} className={`change change-${change.kind}`}>
          <span className="change-mark" aria-hidden="true">
            {change.kind === "added" ? "+" : change.kind === "removed" ? "−" : "~"}
          </span>{" "}
          <code>{change.key}</code> <span className="muted">{change.kind}</span> {change.summary}
        </li>
      ))}
    </ul>
  );
}
