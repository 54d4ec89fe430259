// Vitest's global setup for the end-to-end files: one `npm start` server that every file needing nothing
// of its own shares (files that kill, restart, count or read the log of a server start their own).
import type { TestProject } from "vitest/node";
import { startTestServer } from "./helpers.ts";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startTestServer();
  project.provide("sharedServer", { url: server.url, apiKey: server.apiKey, startupOutput: server.output() });
  return () => server.stop();
}
