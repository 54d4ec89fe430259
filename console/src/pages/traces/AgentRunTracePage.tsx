import { useEffect, useState } from "react";
import { Redirect, useParams } from "wouter";
import { ErrorBox, Loading } from "../../components/ErrorBox.tsx";
import { PageHeader } from "../../components/Layout.tsx";
import { findAgentTrace } from "./tracing-api.ts";

/** Tries over about 5 s: the Agent Server hands a run's trace over once the run has ended. */
const ATTEMPTS = 6;
const PAUSE_MS = 1000;

type Lookup =
  | { state: "looking"; attempt: number }
  | { state: "found"; traceId: string }
  | { state: "missing" }
  | { state: "failed"; error: unknown };

/** `/traces/agent-runs/<run id>`: finds the trace of an Agent Server run and opens it. */
export function AgentRunTracePage() {
  const { runId } = useParams<{ runId: string }>();
  const [lookup, setLookup] = useState<Lookup>({ state: "looking", attempt: 1 });
  const [nonce, setNonce] = useState(0);

  // biome-ignore lint/correctness/useExhaustiveDependencies: nonce restarts the lookup (Retry).
  useEffect(() => {
    const controller = new AbortController();
    const pause = () => new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    (async () => {
      for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
        setLookup({ state: "looking", attempt });
        const root = await findAgentTrace(runId, controller.signal);
        if (controller.signal.aborted) return;
        if (root) return setLookup({ state: "found", traceId: root.trace_id });
        if (attempt < ATTEMPTS) await pause();
        if (controller.signal.aborted) return;
      }
      setLookup({ state: "missing" });
    })().catch((error: unknown) => {
      if (!controller.signal.aborted) setLookup({ state: "failed", error });
    });
    return () => controller.abort();
  }, [runId, nonce]);

  if (lookup.state === "found") return <Redirect to={`/traces/trace/${lookup.traceId}`} replace />;
  return (
    <>
      <PageHeader title="Trace of an agent run" />
      <p className="muted mono">{runId}</p>
      {lookup.state === "looking" ? (
        <Loading what={`Looking for its trace (attempt ${lookup.attempt} of ${ATTEMPTS})`} />
      ) : null}
      {lookup.state === "failed" ? <ErrorBox error={lookup.error} /> : null}
      {lookup.state === "missing" ? (
        <div className="card" role="status">
          <strong>No trace found for this run.</strong>
          <p className="muted">
            Agent tracing may be off for this deployment (AGENT_TRACING), the run may still be running (its trace is
            stored when it ends), or the run id may be wrong.
          </p>
          <button type="button" onClick={() => setNonce((n) => n + 1)}>
            Retry
          </button>
        </div>
      ) : null}
    </>
  );
}
