import { backoff } from "../core/retry.ts";
import { log } from "../observability/log.ts";

/** Every message on the work queue names its kind; each kind has one handler. */
export interface WorkMessage {
  kind: string;
  [field: string]: unknown;
}

export type WorkHandler = (body: WorkMessage, env: Env) => Promise<void>;

/**
 * Routes queue messages to their handler. A handler that throws gets the message retried (with the
 * queue's backoff); a message nobody handles is logged and acknowledged, since retrying cannot help it.
 */
export async function dispatchQueueBatch(
  batch: MessageBatch<unknown>,
  env: Env,
  handlers: Record<string, WorkHandler>,
): Promise<void> {
  for (const message of batch.messages) {
    const body = message.body as Partial<WorkMessage> | null;
    const handler = body && typeof body.kind === "string" ? handlers[body.kind] : undefined;
    if (!handler) {
      log.error("queue message with no handler dropped", {
        queue: batch.queue,
        id: message.id,
        kind: body?.kind ?? null,
      });
      message.ack();
      continue;
    }
    try {
      await handler(body as WorkMessage, env);
      message.ack();
    } catch (error) {
      log.error("queue message failed; will retry", {
        queue: batch.queue,
        id: message.id,
        kind: body!.kind,
        attempts: message.attempts,
        error: String(error),
      });
      message.retry({ delaySeconds: backoff(message.attempts, { base: 1, cap: 60 }) });
    }
  }
}
