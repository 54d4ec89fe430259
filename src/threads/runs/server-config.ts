// Until the run manager imports it from assistants/server-config.ts (where assistants, lower, can reach it).
export { clientConfig, clientConfigurable, isServerConfigurableKey } from "../../assistants/server-config.ts";
