// Until the route and run files of the other domains import these from their new homes.
export { filterAsContainment } from "../core/auth-filter.ts";
export type { AuthUser } from "../deployment/custom-auth.ts";
