import { type ComponentType, lazy, Suspense } from "react";
import { Loading } from "./components/ErrorBox.tsx";
import { AssistantsPage } from "./pages/assistants/AssistantsList.tsx";
import { ChatPickerPage } from "./pages/chat/ChatPicker.tsx";
import { CronsPage } from "./pages/crons/CronsPage.tsx";
import { ExportDetailPage } from "./pages/exports/ExportDetail.tsx";
import { ExportsPage } from "./pages/exports/ExportsPage.tsx";
import { StorePage } from "./pages/store/StorePage.tsx";
import { ThreadPage } from "./pages/threads/ThreadPage.tsx";
import { ThreadsPage } from "./pages/threads/ThreadsPage.tsx";
import { AgentRunTracePage } from "./pages/traces/AgentRunTracePage.tsx";
import { ProjectsPage } from "./pages/traces/ProjectsPage.tsx";
import { RunsPage } from "./pages/traces/RunsPage.tsx";
import { TracePage } from "./pages/traces/TracePage.tsx";

// Pages whose code loads when first opened: the chat carries the SDK's streaming hook (and
// @langchain/core with it), the assistant page the graph layout library (dagre).
const LazyChat = lazy(() => import("./pages/chat/ChatPage.tsx").then((module) => ({ default: module.ChatPage })));
const LazyAssistant = lazy(() =>
  import("./pages/assistants/AssistantDetail.tsx").then((module) => ({ default: module.AssistantDetailPage })),
);

function ChatPage() {
  return (
    <Suspense fallback={<Loading />}>
      <LazyChat />
    </Suspense>
  );
}

function AssistantDetailPage() {
  return (
    <Suspense fallback={<Loading />}>
      <LazyAssistant />
    </Suspense>
  );
}

/**
 * Every page of the console: its path pattern under /console (wouter syntax) and its component.
 * The first is where `/console/` lands.
 */
export const PAGES: { path: string; component: ComponentType }[] = [
  { path: "/assistants", component: AssistantsPage },
  { path: "/assistants/:assistantId", component: AssistantDetailPage },
  { path: "/chat", component: ChatPickerPage },
  { path: "/chat/:assistantId", component: ChatPage },
  { path: "/threads", component: ThreadsPage },
  { path: "/threads/:threadId", component: ThreadPage },
  { path: "/traces", component: ProjectsPage },
  { path: "/traces/projects/:projectId", component: RunsPage },
  { path: "/traces/trace/:traceId", component: TracePage },
  { path: "/traces/agent-runs/:runId", component: AgentRunTracePage },
  { path: "/exports", component: ExportsPage },
  { path: "/exports/:exportId", component: ExportDetailPage },
  { path: "/crons", component: CronsPage },
  { path: "/store", component: StorePage },
];
