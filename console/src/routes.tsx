import type { ComponentType } from "react";
import { AssistantsPage } from "./pages/Assistants.tsx";
import { ThreadPage } from "./pages/threads/ThreadPage.tsx";
import { ThreadsPage } from "./pages/threads/ThreadsPage.tsx";

/**
 * Every page of the console: its path pattern under /console (wouter syntax) and its component.
 * The first is where `/console/` lands.
 */
export const PAGES: { path: string; component: ComponentType }[] = [
  { path: "/assistants", component: AssistantsPage },
  { path: "/threads", component: ThreadsPage },
  { path: "/threads/:threadId", component: ThreadPage },
];
