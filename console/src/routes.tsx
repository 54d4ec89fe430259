import type { ComponentType } from "react";
import { AssistantsPage } from "./pages/Assistants.tsx";
import { AgentRunTracePage } from "./pages/traces/AgentRunTracePage.tsx";
import { ProjectsPage } from "./pages/traces/ProjectsPage.tsx";
import { RunsPage } from "./pages/traces/RunsPage.tsx";
import { TracePage } from "./pages/traces/TracePage.tsx";

/**
 * Every page of the console: its path pattern under /console (wouter syntax) and its component.
 * The first is where `/console/` lands.
 */
export const PAGES: { path: string; component: ComponentType }[] = [
  { path: "/assistants", component: AssistantsPage },
  { path: "/traces", component: ProjectsPage },
  { path: "/traces/projects/:projectId", component: RunsPage },
  { path: "/traces/trace/:traceId", component: TracePage },
  { path: "/traces/agent-runs/:runId", component: AgentRunTracePage },
];
