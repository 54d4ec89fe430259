import { type ComponentType, lazy, Suspense } from "react";
import { Loading } from "./components/ErrorBox.tsx";
import { AssistantsPage } from "./pages/Assistants.tsx";
import { ChatPickerPage } from "./pages/chat/ChatPicker.tsx";
import { ThreadPage } from "./pages/threads/ThreadPage.tsx";
import { ThreadsPage } from "./pages/threads/ThreadsPage.tsx";
import { AgentRunTracePage } from "./pages/traces/AgentRunTracePage.tsx";
import { ProjectsPage } from "./pages/traces/ProjectsPage.tsx";
import { RunsPage } from "./pages/traces/RunsPage.tsx";
import { TracePage } from "./pages/traces/TracePage.tsx";

// The chat page carries the SDK's streaming hook (and @langchain/core with it): loaded when opened.
const LazyChatPage = lazy(() => import("./pages/chat/ChatPage.tsx").then((module) => ({ default: module.ChatPage })));

function ChatPage() {
  return (
    <Suspense fallback={<Loading />}>
      <LazyChatPage />
    </Suspense>
  );
}

/**
 * Every page of the console: its path pattern under /console (wouter syntax) and its component.
 * The first is where `/console/` lands.
 */
export const PAGES: { path: string; component: ComponentType }[] = [
  { path: "/assistants", component: AssistantsPage },
  { path: "/threads", component: ThreadsPage },
  { path: "/threads/:threadId", component: ThreadPage },
  { path: "/chat", component: ChatPickerPage },
  { path: "/chat/:assistantId", component: ChatPage },
  { path: "/traces", component: ProjectsPage },
  { path: "/traces/projects/:projectId", component: RunsPage },
  { path: "/traces/trace/:traceId", component: TracePage },
  { path: "/traces/agent-runs/:runId", component: AgentRunTracePage },
];
