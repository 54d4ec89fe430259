// Imported by the generated registry before the deployment's own modules, so they can use what the
// official servers provide at module load.
import { registerSdkLogger } from "../observability/sdk-logger.ts";

registerSdkLogger();
