// `npm run build`: langgraph.json → src/deployment/registry.generated.ts (+ /docs assets).
// Also wrangler's [build] command, so `wrangler dev` and `wrangler deploy` always ship a fresh registry.
import { relative } from "node:path";
import { BuildError, buildDeployment, configPathFromArgs } from "./lib/deployment.ts";

try {
  const configPath = configPathFromArgs(process.argv.slice(2));
  const { graphs } = await buildDeployment(configPath);
  console.log(`Built deployment ${relative(process.cwd(), configPath) || configPath}: graphs ${graphs.join(", ")}`);
} catch (error) {
  if (error instanceof BuildError) {
    console.error(`Build failed: ${error.message}`);
    process.exit(1);
  }
  throw error;
}
