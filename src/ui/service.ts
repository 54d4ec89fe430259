import { getMimeType } from "hono/utils/mime";
import type { UiEntry } from "../deployment/manifest.ts";

/**
 * Generative UI (langgraph.json `ui`): the build bundles each graph's component file into the
 * Worker's static assets under `/ui/<graph id>/`; these functions answer from the manifest's list of
 * those files. Only listed names are ever served, so a path parameter can never reach another asset.
 */

/** The global the bundle assigns (see scripts/lib/ui-bundle.ts): non-alphanumerics become `_`. */
const globalName = (graphId: string) => `__LGUI_${graphId.replace(/[^a-zA-Z0-9]/g, "_")}`;

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/**
 * Escapes text for an attribute value quoted with `quote`. A no-op for the usual hosts and component
 * names, so the fragment is the official server's byte for byte; a name or Host carrying that quote
 * or `<` cannot end the attribute or the tag early.
 */
const inAttribute = (text: string, quote: '"' | "'") =>
  text.replace(quote === '"' ? /[&<>"]/g : /[&<>']/g, (char) => ENTITIES[char]);

export class UiCatalog {
  readonly #entries: Map<string, UiEntry>;

  constructor(entries: readonly UiEntry[]) {
    this.#entries = new Map(entries.map((entry) => [entry.id, entry]));
  }

  /**
   * The HTML fragment `LoadExternalComponent` mounts in its shadow root: a stylesheet link per CSS
   * file, then the script whose onload renders `name` into the element the client names by replacing
   * `{{shadowRootId}}`. Null when the graph has no UI.
   */
  fragment(graphId: string, name: string, host: string): string | null {
    const entry = this.#entries.get(graphId);
    if (!entry?.files.length) return null;
    const isHost = (needle: string) => host === needle || host.startsWith(`${needle}:`);
    // Protocol-relative, except on loopback names, where the page is usually https-less anyway.
    const protocol = isHost("localhost") || isHost("127.0.0.1") ? "http:" : "";
    const base = `${protocol}//${inAttribute(host, '"')}/ui/${graphId}`;
    const lines = entry.files
      .filter((file) => file.endsWith(".css"))
      .map((file) => `<link rel="stylesheet" href="${base}/${file}" />`);
    const script = entry.files.find((file) => file.endsWith(".js"));
    if (script) {
      const onload = `${globalName(graphId)}.render(${JSON.stringify(name)}, "{{shadowRootId}}")`;
      lines.push(`<script src="${base}/${script}" onload='${inAttribute(onload, "'")}'></script>`);
    }
    return lines.join("\n");
  }

  /** The asset path and content type of one bundled file, or null when the graph did not produce it. */
  asset(graphId: string, file: string): { path: string; contentType: string } | null {
    if (!this.#entries.get(graphId)?.files.includes(file)) return null;
    return { path: `/ui/${graphId}/${file}`, contentType: getMimeType(file) ?? "text/plain" };
  }
}
