import { backoff, sleep } from "../../core/retry.ts";
import { log } from "../../observability/log.ts";

const ATTEMPTS = 4;

/**
 * POSTs the finished run to its webhook. Retried with backoff on network errors and 5xx answers
 * (a 4xx is the receiver's final word). Never throws.
 */
export async function deliverWebhook(url: string, payload: Record<string, unknown>): Promise<boolean> {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", "User-Agent": "agent-platform-webhook" },
        body: JSON.stringify({ ...payload, webhook_sent_at: new Date().toISOString() }),
      });
      await response.body?.cancel();
      if (response.status < 500) {
        if (!response.ok)
          log.warn("webhook refused", { url_host: new URL(url).host, status: response.status, run_id: payload.run_id });
        return response.ok;
      }
      log.warn("webhook failed; retrying", {
        url_host: new URL(url).host,
        status: response.status,
        attempt,
        run_id: payload.run_id,
      });
    } catch (error) {
      log.warn("webhook unreachable; retrying", {
        url_host: new URL(url).host,
        error: String(error),
        attempt,
        run_id: payload.run_id,
      });
    }
    if (attempt < ATTEMPTS) await sleep(backoff(attempt - 1, { base: 500 }));
  }
  return false;
}
