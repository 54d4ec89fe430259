// The cap on feedback parts per multipart request (src/tracing/feedback/ingest.ts).
import { describe, expect, it } from "vitest";
import { ingestFeedback, MAX_FEEDBACK_PARTS } from "../../src/tracing/feedback/ingest.ts";
import type { FeedbackService } from "../../src/tracing/feedback/service.ts";

describe("multipart feedback parts", () => {
  it(`stores at most ${MAX_FEEDBACK_PARTS} per request and lists the rest as too_large`, async () => {
    let stored = 0;
    const service = { create: async () => void stored++ } as unknown as FeedbackService;
    const parts = Array.from({ length: MAX_FEEDBACK_PARTS + 5 }, () => ({
      id: crypto.randomUUID(),
      run_id: crypto.randomUUID(),
      key: "thumbs",
      score: 1,
    }));
    const result = await ingestFeedback(service, parts);
    expect(stored).toBe(MAX_FEEDBACK_PARTS);
    expect(result.accepted).toBe(MAX_FEEDBACK_PARTS);
    expect(result.errors).toHaveLength(5);
    expect(result.errors[0]).toMatchObject({ operation: "feedback", kind: "too_large", run_id: parts.at(-5)?.id });
  });
});
