import type { ReactNode } from "react";
import { Link, useLocation } from "wouter";
import type { Workspace } from "../../../src/tenancy/schemas.ts";
import { api } from "../api.ts";
import { useLoad } from "../hooks.ts";
import { getSession, setSession } from "../session.ts";

const SECTIONS = [
  { href: "/assistants", label: "Assistants" },
  { href: "/chat", label: "Chat" },
  { href: "/threads", label: "Threads" },
  { href: "/traces", label: "Traces" },
  { href: "/exports", label: "Exports" },
  { href: "/crons", label: "Crons" },
  { href: "/store", label: "Store" },
];

/** The frame around every page: navigation, the workspace picker and sign-out. */
export function Layout({ children }: { children: ReactNode }) {
  const [location] = useLocation();
  return (
    <div className="shell">
      <header className="topbar">
        <Link href="/assistants" className="brand">
          Agent Platform
        </Link>
        <nav className="nav" aria-label="Sections">
          {SECTIONS.map((section) => (
            <Link
              key={section.href}
              href={section.href}
              className={location.startsWith(section.href) ? "active" : undefined}
            >
              {section.label}
            </Link>
          ))}
        </nav>
        <div className="session">
          <WorkspacePicker />
          <button type="button" className="link" onClick={() => setSession(null)}>
            Sign out
          </button>
        </div>
      </header>
      <main className="content">{children}</main>
    </div>
  );
}

/**
 * The workspaces an organization key may act in (X-Tenant-Id), from `GET /api/v1/workspaces`, which
 * answers organization admins only. Any other key, or a bearer token without a key, sees no picker
 * and acts in its own (or its organization's default) workspace.
 */
function WorkspacePicker() {
  const session = getSession();
  const { data } = useLoad(
    async (signal) => (session?.apiKey ? api<Workspace[]>("/api/v1/workspaces", { signal }) : []),
    [session?.apiKey],
  );
  if (!session || !data || data.length < 2) return null;
  return (
    <label className="workspace">
      <span className="sr-only">Workspace</span>
      <select
        aria-label="Workspace"
        value={session.tenantId ?? ""}
        onChange={(event) => setSession({ ...session, tenantId: event.target.value || undefined })}
      >
        <option value="">Default workspace</option>
        {data.map((workspace) => (
          <option key={workspace.id} value={workspace.id}>
            {workspace.display_name}
          </option>
        ))}
      </select>
    </label>
  );
}

export function PageHeader({ title, children }: { title: ReactNode; children?: ReactNode }) {
  return (
    <div className="page-header">
      <h1>{title}</h1>
      {children ? <div className="page-actions">{children}</div> : null}
    </div>
  );
}
