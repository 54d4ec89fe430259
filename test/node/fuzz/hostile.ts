// The hostile-input suites, on the fuzz file's server, after its generic fuzzing: each gets fresh
// fixtures (the generic run deletes its own at the end).
import { beforeAll, describe } from "vitest";
import { describeFieldValues } from "./field-values.ts";
import { api, createFixtures, type Fixtures } from "./harness.ts";
import { describeLastEventId } from "./last-event-id.ts";
import { describeParallelWrites } from "./parallel-writes.ts";
import { describeRunValues } from "./runs.ts";
import { describeTracing } from "./tracing.ts";

export function describeHostileInput(): void {
  describe("hostile input from /openapi.json", () => {
    let fixtures: Fixtures;
    beforeAll(async () => {
      // The generic run may have put the organization on a plan without crons or bulk export.
      await api("PATCH", "/api/v1/orgs/current", { plan: null });
      fixtures = await createFixtures("fuzz-hostile");
    }, 60_000);

    describe("field values", () => describeFieldValues(() => fixtures));
    describe("values that reach graphs", () => describeRunValues(() => fixtures));
    describe("parallel writes", () => describeParallelWrites());
    describe("tracing", () => describeTracing());
    describe("stream joins", () => describeLastEventId());
  });
}
