import type { Interrupt } from "@langchain/langgraph-sdk";
import { type FormEvent, useId, useState } from "react";
import { parseJsonOrString } from "./util.ts";

/**
 * A run stopped at `interrupt()`: what it asks, and a form that resumes it with `Command(resume=…)`;
 * the answer is read as JSON, or taken as a plain string when it isn't JSON. A thread stopped with
 * nodes still to run and nothing asked (a breakpoint, a cancelled run) gets a plain Continue.
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
  function submit(event: FormEvent) {
    event.preventDefault();
    onResume(asking.length > 0 ? parseJsonOrString(text) : undefined);
  }
  return (
    <section className="card chat-interrupt" aria-label="Interrupt">
      <h2>{asking.length > 0 ? "Waiting for your answer" : "Paused before the graph finished"}</h2>
      {asking.map((item, index) => (
        <figure key={item.id ?? index} aria-label="Interrupt value">
          <pre>{JSON.stringify(item.value, null, 2)}</pre>
        </figure>
      ))}
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
