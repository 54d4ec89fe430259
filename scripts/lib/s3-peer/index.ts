import { rmSync } from "node:fs";
import { join } from "node:path";
import { S3Client, type S3ClientOptions } from "../../../src/export/s3.ts";
import { PROJECT_ROOT } from "../deployment.ts";
import { listeningUrl } from "../local-runtime.ts";
import { scratchDir } from "../scratch.ts";
import { offlineEnv, spawnWrangler, stopProcessGroup, waitForOk } from "../wrangler.ts";

/**
 * A real S3 peer: `wrangler dev` for ./wrangler.toml, whose R2 binding declares
 * `local_dev.experimental_s3_credentials`, so wrangler serves the bucket at
 * /cdn-cgi/local/r2/s3/<bucket> and verifies SigV4 against those credentials. What it answers
 * (wrangler 4.164): unknown key id 401 Unauthorized, wrong secret 403 SignatureDoesNotMatch,
 * unknown bucket 404 NoSuchBucket (checked before the signature), parts under 5 MiB 400
 * EntityTooSmall on Complete; any region is accepted; a session token is refused (400
 * InvalidArgument) once the signature checks.
 */

const CONFIG = join(PROJECT_ROOT, "scripts/lib/s3-peer/wrangler.toml");

/** Must match wrangler.toml; local-only values. */
export const PEER_BUCKET = "export-peer";
export const PEER_ACCESS_KEY_ID = "peer-access-key-id";
export const PEER_SECRET_ACCESS_KEY = "peer-secret-access-key-local-only";

export interface S3Peer {
  /** What a destination's endpoint_url holds; with path-style addressing the bucket follows it. */
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** A client for the peer's bucket with its credentials (path-style, region "auto"). */
  client(options?: S3ClientOptions): S3Client;
  /** The last 20 kB of wrangler's output. */
  output(): string;
  stop(): Promise<void>;
}

export async function startS3Peer(): Promise<S3Peer> {
  const persistTo = scratchDir("s3-peer");
  let output = "";
  const args = [
    "dev",
    "--config",
    CONFIG,
    "--ip",
    "127.0.0.1",
    // The system picks the port; wrangler says which ("Ready on http://...").
    "--port",
    "0",
    "--persist-to",
    persistTo,
    "--show-interactive-dev-session=false",
  ];
  const child = spawnWrangler(args, { env: offlineEnv(), stdio: ["ignore", "pipe", "pipe"], detached: true });
  child.stdout?.on("data", (chunk) => (output = (output + chunk).slice(-20_000)));
  child.stderr?.on("data", (chunk) => (output = (output + chunk).slice(-20_000)));

  const stop = async () => {
    await stopProcessGroup(child);
    rmSync(persistTo, { recursive: true, force: true });
  };

  let origin = "";
  try {
    origin = (await listeningUrl(child, 60_000, /Ready on (http:\/\/[^\s]+)/)).replace(/\/$/, "");
    // The peer's Worker answers every path; /cdn-cgi/local/r2/s3 is served by wrangler beside it.
    await waitForOk(`${origin}/ok`, 60_000, child);
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n--- wrangler output ---\n${output}`);
  }

  const endpoint = `${origin}/cdn-cgi/local/r2/s3`;
  return {
    endpoint,
    bucket: PEER_BUCKET,
    accessKeyId: PEER_ACCESS_KEY_ID,
    secretAccessKey: PEER_SECRET_ACCESS_KEY,
    client: (options = {}) =>
      new S3Client(
        { bucket: PEER_BUCKET, endpointUrl: endpoint, region: "auto", addressingStyle: "path" },
        { accessKeyId: PEER_ACCESS_KEY_ID, secretAccessKey: PEER_SECRET_ACCESS_KEY },
        options,
      ),
    output: () => output,
    stop,
  };
}
