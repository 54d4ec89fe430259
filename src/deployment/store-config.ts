import type { CheckpointerConfig, StoreConfig } from "./config.ts";
import { parseEmbedSpec } from "./config.ts";
import type { CheckpointerManifest, DeploymentManifest, StoreEmbedEntry, StoreManifest } from "./manifest.ts";

/**
 * langgraph.json `store` and `checkpointer` as the Worker reads them. The build validates the keys
 * (src/deployment/config.ts) and writes them into the registry with LangGraph's defaults applied
 * (langchain-ai/langgraph libs/cli/langgraph_cli/schemas.py); these accessors read them back.
 */

/** `store.index.fields` when absent: the whole value, as one text. */
export const DEFAULT_INDEX_FIELDS: readonly string[] = ["$"];
/** `checkpointer.ttl.sweep_interval_minutes` when absent (the reference's "typically ~5 minutes"). */
export const DEFAULT_THREAD_SWEEP_INTERVAL_MINUTES = 5;
/** `checkpointer.ttl.sweep_limit` when absent (the reference's default). */
export const DEFAULT_THREAD_SWEEP_LIMIT = 1000;

/** A user's embedding function: texts in, one vector per text out (sync or async). */
export type EmbedTexts = (texts: string[]) => number[][] | Promise<number[][]>;

/** The store's settings, without module references: what the build writes as JSON. */
export type StoreSettings = StoreManifest;
export type CheckpointerSettings = CheckpointerManifest;

/**
 * The build's half: the validated `store` section with defaults applied. `embed` is left for the
 * caller when it names a function (the registry refers to the bundled module instead).
 */
export function normalizeStore(
  store: StoreConfig | null | undefined,
  functionEmbed: (file: string, exportName: string, source: string) => StoreEmbedEntry,
): StoreManifest {
  const index = store?.index ?? null;
  const ttl = store?.ttl ?? null;
  let embed: StoreEmbedEntry | null = null;
  if (index) {
    const spec = parseEmbedSpec(index.embed);
    if ("error" in spec) throw new Error(`store.index.embed: ${spec.error}`);
    embed =
      spec.kind === "function"
        ? functionEmbed(spec.file, spec.exportName, index.embed)
        : { kind: spec.kind, model: spec.model, source: index.embed };
  }
  return {
    index: index && embed ? { embed, dims: index.dims, fields: [...(index.fields ?? DEFAULT_INDEX_FIELDS)] } : null,
    ttl: ttl
      ? {
          refreshOnRead: ttl.refresh_on_read ?? true,
          defaultTtlMinutes: ttl.default_ttl ?? null,
          sweepIntervalMinutes: ttl.sweep_interval_minutes ?? null,
        }
      : null,
  };
}

export function normalizeCheckpointer(checkpointer: CheckpointerConfig | null | undefined): CheckpointerManifest {
  const ttl = checkpointer?.ttl ?? null;
  return {
    ttl: ttl
      ? {
          strategy: ttl.strategy ?? "delete",
          defaultTtlMinutes: ttl.default_ttl ?? null,
          sweepIntervalMinutes: ttl.sweep_interval_minutes ?? DEFAULT_THREAD_SWEEP_INTERVAL_MINUTES,
          sweepLimit: ttl.sweep_limit ?? DEFAULT_THREAD_SWEEP_LIMIT,
        }
      : null,
  };
}

/** The deployment's store settings; a registry without a `store` section has no index and no TTL. */
export function storeConfig(manifest: Pick<DeploymentManifest, "store">): StoreManifest {
  return manifest.store ?? { index: null, ttl: null };
}

/** The deployment's checkpointer settings; a registry without the section has no thread TTL. */
export function checkpointerConfig(manifest: Pick<DeploymentManifest, "checkpointer">): CheckpointerManifest {
  return manifest.checkpointer ?? { ttl: null };
}

/** The user's embedding function when `store.index.embed` names one, else null (a provider's model). */
export function embedFunction(store: StoreManifest): EmbedTexts | null {
  const embed = store.index?.embed;
  if (embed?.kind !== "function") return null;
  const value = embed.module[embed.exportName];
  // The build checked it; a hand-made manifest might not have been.
  if (typeof value !== "function") {
    throw new Error(`store.index.embed (${embed.source}): export "${embed.exportName}" is not a function`);
  }
  return value as EmbedTexts;
}
