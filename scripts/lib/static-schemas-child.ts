// The child process of the static schema extraction (scripts/lib/static-schemas.ts): runs the official
// LangGraph.js server's extractor (`getStaticGraphSchema` of @langchain/langgraph-api/schema) on the
// TypeScript 5 compiler it needs, and sends the result back over IPC. A child process, not the build's own
// process, because the extractor redirects the `typescript` module (below) and can take a while; the parent
// kills it at its timeout.

import Module, { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { PLATFORM_ROOT } from "./root.ts";
import type { ChildRequest, ChildResponse, GraphSchemaSet } from "./static-schemas.ts";

/** The checkout's extractor package, unless the request names where the extractor resolves from. */
const EXTRACTOR_PACKAGE = join(PLATFORM_ROOT, "scripts/schema-extractor/package.json");
let requireFromExtractor = createRequire(EXTRACTOR_PACKAGE);

interface GraphSpec {
  sourceFile: string;
  exportSymbol: string;
}
interface OfficialSchemaModule {
  getStaticGraphSchema(
    specs: Record<string, GraphSpec>,
    options: { mainThread: boolean },
  ): Promise<Record<string, GraphSchemaSet>>;
}

/**
 * The repository's own `typescript` is 7.x, which has no JS compiler API. The extractor's package has
 * TypeScript 5 next to it, but @typescript/vfs (hoisted to the root) finds the TypeScript lib files with
 * `require.resolve("typescript")` from its own folder, which would land on 7.x. This process only
 * extracts schemas, so every CommonJS resolution of `typescript` goes to the TypeScript 5 copy.
 */
function redirectTypeScriptTo5(): void {
  const typescript5 = requireFromExtractor.resolve("typescript");
  const loader = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
  const resolve = loader._resolveFilename;
  loader._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]) {
    return request === "typescript" ? typescript5 : resolve.call(this, request, ...rest);
  };
}

async function extract(request: ChildRequest): Promise<ChildResponse> {
  if (request.extractorFrom) requireFromExtractor = createRequire(request.extractorFrom);
  redirectTypeScriptTo5();
  const official = (await import(
    pathToFileURL(requireFromExtractor.resolve("@langchain/langgraph-api/schema")).href
  )) as OfficialSchemaModule;
  const specs = Object.fromEntries(
    request.graphs.map((g) => [g.id, { sourceFile: g.file, exportSymbol: g.exportName } satisfies GraphSpec]),
  );
  try {
    // One TypeScript program for all graphs, as the official server builds it.
    return { schemas: await official.getStaticGraphSchema(specs, { mainThread: true }), errors: {} };
  } catch {
    // One graph failing fails the whole program: try each graph alone, so the others keep theirs.
    const response: ChildResponse = { schemas: {}, errors: {} };
    for (const [id, spec] of Object.entries(specs)) {
      try {
        Object.assign(response.schemas, await official.getStaticGraphSchema({ [id]: spec }, { mainThread: true }));
      } catch (error) {
        response.errors[id] = (error as Error).message ?? String(error);
      }
    }
    return response;
  }
}

process.once("message", (request: ChildRequest) => {
  extract(request).then(
    (response) => process.send?.(response, () => process.exit(0)),
    (error: unknown) => {
      console.error((error as Error).stack ?? String(error));
      process.exit(1);
    },
  );
});
