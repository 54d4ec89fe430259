import { DomainError } from "../../core/errors.ts";
import type { IngestResult, RunProblem } from "../ingest.ts";
import { describeIssues } from "../run-input.ts";
import { FeedbackCreateSchema } from "./schemas.ts";
import type { FeedbackService } from "./service.ts";

/**
 * Feedback parts one multipart request may carry: each costs a few storage calls, and a request has a
 * bounded number of them. The rest are refused, each listed in `errors`.
 */
export const MAX_FEEDBACK_PARTS = 100;

/** The feedback parts of a multipart ingest request: each stored or refused on its own, like runs. */
export async function ingestFeedback(
  service: FeedbackService,
  parts: Record<string, unknown>[],
): Promise<IngestResult> {
  const errors: RunProblem[] = [];
  let accepted = 0;
  for (const [index, part] of parts.entries()) {
    const id = typeof part.id === "string" ? part.id : null;
    if (index >= MAX_FEEDBACK_PARTS) {
      errors.push({
        operation: "feedback",
        run_id: id,
        kind: "too_large",
        detail: `At most ${MAX_FEEDBACK_PARTS} feedback parts per request; send the rest in another request`,
      });
      continue;
    }
    const parsed = FeedbackCreateSchema.safeParse(part);
    if (!parsed.success) {
      errors.push({ operation: "feedback", run_id: id, kind: "invalid", detail: describeIssues(parsed.error) });
      continue;
    }
    try {
      await service.create(parsed.data);
      accepted++;
    } catch (error) {
      if (!(error instanceof DomainError) || (error.kind !== "not_found" && error.kind !== "invalid")) throw error;
      errors.push({ operation: "feedback", run_id: id, kind: error.kind, detail: error.message });
    }
  }
  return { accepted, errors };
}
