import type { Interrupt } from "@langchain/langgraph-sdk";
import { type FormEvent, useId, useState } from "react";
import { parseJsonOrString } from "../../json-input.ts";

/** Agent Inbox's request for a person (`HumanInterrupt`), as graphs interrupt with it: a list of one. */
interface HumanInterrupt {
  action_request: { action: string; args: Record<string, unknown> };
  config: { allow_accept: boolean; allow_edit: boolean; allow_respond: boolean; allow_ignore: boolean };
  description?: string;
}

function humanInterrupt(value: unknown): HumanInterrupt | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  const candidate = first as Partial<HumanInterrupt> | null | undefined;
  return candidate && typeof candidate === "object" && candidate.action_request && candidate.config
    ? (candidate as HumanInterrupt)
    : undefined;
}

/**
 * A run stopped at `interrupt()`: what it asks, and a form that resumes it with `Command(resume=…)`;
 * the answer is read as JSON, or taken as a plain string when it isn't JSON. An Agent Inbox request
 * gets its buttons too: accept and ignore resume at once, edit and respond fill in the answer to
 * complete. A thread stopped with nodes still to run and nothing asked (a breakpoint, a cancelled
 * run) gets a plain Continue.
 */
export function InterruptPanel({
  interrupts,
  busy,
  onResume,
}: {
  interrupts: Interrupt[];
  busy: boolean;
  onResume: (value: unknown) => void;
}) {
  const [text, setText] = useState("");
  const fieldId = useId();
  const asking = interrupts.filter((item) => item.value !== undefined);
  const request = asking.length === 1 ? humanInterrupt(asking[0].value) : undefined;
  const answer = (response: unknown) => JSON.stringify([response], null, 2);
  function submit(event: FormEvent) {
    event.preventDefault();
    onResume(asking.length > 0 ? parseJsonOrString(text) : undefined);
  }
  return (
    <section className="card chat-interrupt" aria-label="Interrupt">
      <h2>{asking.length > 0 ? "Waiting for your answer" : "Paused before the graph finished"}</h2>
      {request?.description ? <p>{request.description}</p> : null}
      {asking.map((item, index) => (
        <figure key={item.id ?? index} aria-label="Interrupt value">
          <pre>{JSON.stringify(item.value, null, 2)}</pre>
        </figure>
      ))}
      {request ? (
        <fieldset className="row chat-actions" aria-label="Answer the request">
          {[
            // Accept and ignore resume at once; edit and respond fill in the answer to complete first.
            {
              allowed: request.config.allow_accept,
              label: "Accept",
              act: () => onResume([{ type: "accept", args: null }]),
            },
            {
              allowed: request.config.allow_edit,
              label: "Edit…",
              act: () => setText(answer({ type: "edit", args: request.action_request })),
            },
            {
              allowed: request.config.allow_respond,
              label: "Respond…",
              act: () => setText(answer({ type: "response", args: "" })),
            },
            {
              allowed: request.config.allow_ignore,
              label: "Ignore",
              act: () => onResume([{ type: "ignore", args: null }]),
            },
          ]
            .filter((choice) => choice.allowed)
            .map((choice, index) => (
              <button
                key={choice.label}
                type="button"
                className={index === 0 ? undefined : "secondary"}
                disabled={busy}
                onClick={choice.act}
              >
                {choice.label}
              </button>
            ))}
        </fieldset>
      ) : null}
      <form onSubmit={submit} className="chat-resume">
        {asking.length > 0 ? (
          <label htmlFor={fieldId}>
            Resume value <span className="muted">(JSON, or plain text)</span>
            <textarea id={fieldId} value={text} onChange={(event) => setText(event.target.value)} rows={3} />
          </label>
        ) : null}
        <button type="submit" disabled={busy}>
          {asking.length > 0 ? "Resume" : "Continue"}
        </button>
      </form>
    </section>
  );
}
