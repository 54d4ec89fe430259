import type { ComponentType } from "react";
import { AssistantsPage } from "./pages/Assistants.tsx";
import { ChatPage } from "./pages/chat/ChatPage.tsx";
import { ChatPickerPage } from "./pages/chat/ChatPicker.tsx";

/**
 * Every page of the console: its path pattern under /console (wouter syntax) and its component.
 * The first is where `/console/` lands.
 */
export const PAGES: { path: string; component: ComponentType }[] = [
  { path: "/assistants", component: AssistantsPage },
  { path: "/chat", component: ChatPickerPage },
  { path: "/chat/:assistantId", component: ChatPage },
];
