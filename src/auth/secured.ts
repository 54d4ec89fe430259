// Until the route files of the other domains import it from http/secured.ts.
export { secured } from "../http/secured.ts";
