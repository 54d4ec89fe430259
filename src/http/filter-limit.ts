// Until the route files of the other domains import it from core/filter-limit.ts.
export { withFilterLimit } from "../core/filter-limit.ts";
