import "./styles.css";
import { useSyncExternalStore } from "react";
import { createRoot } from "react-dom/client";
import { Redirect, Route, Router, Switch } from "wouter";
import { Layout } from "./components/Layout.tsx";
import { PageBoundary } from "./components/PageBoundary.tsx";
import { SignIn } from "./pages/SignIn.tsx";
import { PAGES } from "./routes.tsx";
import { getSession, subscribeSession } from "./session.ts";

function App() {
  const session = useSyncExternalStore(subscribeSession, getSession);
  if (!session) return <SignIn />;
  return (
    // Remounts every page when the workspace changes, so nothing of the previous one stays on screen.
    <Layout key={session.tenantId ?? ""}>
      <Switch>
        {PAGES.map((page) => (
          <Route key={page.path} path={page.path}>
            <PageBoundary page={page.component} />
          </Route>
        ))}
        <Route path="/">
          <Redirect to={PAGES[0].path} replace />
        </Route>
        <Route>
          <p className="muted">No such page.</p>
        </Route>
      </Switch>
    </Layout>
  );
}

createRoot(document.getElementById("root")!).render(
  <Router base="/console">
    <App />
  </Router>,
);
