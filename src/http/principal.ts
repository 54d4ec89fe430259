/** Who is calling, and in which tenant the request acts. */
export interface Principal {
  /** The API key's id, or "bootstrap" for the `BOOTSTRAP_API_KEY` secret. */
  keyId: string;
  organizationId: string;
  /** The workspace (tenant) this request reads and writes. */
  workspaceId: string;
  /** The key's own workspace; null for an organization-scoped key. */
  keyWorkspaceId: string | null;
  role: "admin" | "member";
}

/** Organization admins manage workspaces and keys; only organization-scoped admin keys qualify. */
export function isOrganizationAdmin(principal: Principal): boolean {
  return principal.role === "admin" && principal.keyWorkspaceId === null;
}
