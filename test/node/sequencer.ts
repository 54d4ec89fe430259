// The order the Node files start in, across projects: vitest would run project after project, so the
// slow tier's minute-long wait would start last and run alone. Files that mostly wait (on real time, or
// on servers of their own) start first, two at a time, and the quick ones fill in beside them.
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Longest first: each waits on a minute boundary, a server of its own, or a long build. */
const LONG_FIRST = [
  "e2e-minute-tick.slow.test.ts",
  "restarts.slow.test.ts",
  "fuzz-openapi.test.ts",
  "e2e-runs.test.ts",
  "build.test.ts",
  "e2e.test.ts",
  "static-schemas.test.ts",
  "e2e-export.test.ts",
  "e2e-protocol-v2.test.ts",
];

function rank(spec: TestSpecification): number {
  const at = LONG_FIRST.findIndex((name) => spec.moduleId.endsWith(`/${name}`));
  return at < 0 ? LONG_FIRST.length : at;
}

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return sorted
      .map((spec, index) => ({ spec, index }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.index - b.index)
      .map(({ spec }) => spec);
  }
}
