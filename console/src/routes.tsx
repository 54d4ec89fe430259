import type { ComponentType } from "react";
import { AssistantDetailPage } from "./pages/assistants/AssistantDetail.tsx";
import { AssistantsPage } from "./pages/assistants/AssistantsList.tsx";
import { CronsPage } from "./pages/crons/CronsPage.tsx";
import { ExportDetailPage } from "./pages/exports/ExportDetail.tsx";
import { ExportsPage } from "./pages/exports/ExportsPage.tsx";
import { StorePage } from "./pages/store/StorePage.tsx";

/**
 * Every page of the console: its path pattern under /console (wouter syntax) and its component.
 * The first is where `/console/` lands.
 */
export const PAGES: { path: string; component: ComponentType }[] = [
  { path: "/assistants", component: AssistantsPage },
  { path: "/assistants/:assistantId", component: AssistantDetailPage },
  { path: "/exports", component: ExportsPage },
  { path: "/exports/:exportId", component: ExportDetailPage },
  { path: "/crons", component: CronsPage },
  { path: "/store", component: StorePage },
];
