import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * A loopback HTTP proxy in front of the S3 peer that can inject faults. Clients use its URL as the
 * endpoint and sign for its host: the Host header is forwarded unchanged, and the peer verifies the
 * signature against the Host header it receives (not its own address), so signatures still check.
 * Bodies are piped through byte for byte; only hop-by-hop headers are left to each connection.
 */

/** An S3-style XML error answer (any status, even 200 as CompleteMultipartUpload can), or a dropped connection. */
export type Fault = { status: number; code: string } | "reset";

export type RecordedRequest = { method: string; path: string };

export interface FaultProxy {
  /** Where clients point their endpoint, e.g. http://127.0.0.1:PORT/cdn-cgi/local/r2/s3 for the peer. */
  url: string;
  /**
   * The next `count` requests (only those `match` accepts, when given) get `fault` instead of
   * reaching the peer; faults queued earlier are used first.
   */
  failNext(count: number, fault: Fault, match?: (request: RecordedRequest) => boolean): void;
  /** Requests signed with this access key id get 403 AccessDenied (what IAM answers without the permission). */
  denyAccessKey(accessKeyId: string): void;
  /** Every request seen, faulted or not: method and path with query, never headers (they hold signatures). */
  requests(): RecordedRequest[];
  stop(): Promise<void>;
}

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

function forwardable(headers: IncomingHttpHeaders | NodeJS.Dict<string | string[]>): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined && !HOP_BY_HOP.has(name)) result[name] = value;
  return result;
}

const xmlError = (code: string, message: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`;

/** The access key id a request is signed with (Authorization header or presigned query). */
function accessKeyIdOf(request: IncomingMessage): string | null {
  const authorization = request.headers.authorization ?? "";
  const credential =
    /Credential=([^,\s]+)/.exec(authorization)?.[1] ??
    new URL(request.url ?? "/", "http://x").searchParams.get("X-Amz-Credential");
  // The id is everything before the last four scope parts (date/region/service/aws4_request).
  return credential ? credential.split("/").slice(0, -4).join("/") : null;
}

/** Reads and drops a request body, so a fault answers after the upload like a failing server would. */
const drain = (request: IncomingMessage) =>
  new Promise<void>((resolve) => {
    request
      .on("end", resolve)
      .on("error", () => resolve())
      .on("close", resolve);
    request.resume();
  });

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const upstream = new URL(target);
  const faults: { fault: Fault; match: (request: RecordedRequest) => boolean }[] = [];
  const denied = new Set<string>();
  const seen: RecordedRequest[] = [];
  const sockets = new Set<Socket>();

  const answer = (response: ServerResponse, method: string, status: number, code: string, message: string) => {
    const body = method === "HEAD" ? "" : xmlError(code, message);
    response.writeHead(status, { "content-type": "application/xml", "content-length": Buffer.byteLength(body) });
    response.end(body);
  };

  const server = createServer(async (request, response) => {
    const method = request.method ?? "GET";
    const recorded = { method, path: request.url ?? "/" };
    seen.push(recorded);
    const index = faults.findIndex((entry) => entry.match(recorded));
    const fault = index === -1 ? undefined : faults.splice(index, 1)[0].fault;
    if (fault === "reset") {
      await drain(request);
      request.socket.destroy();
      return;
    }
    if (fault) {
      await drain(request);
      return answer(response, method, fault.status, fault.code, `Injected fault: ${fault.code}`);
    }
    const keyId = accessKeyIdOf(request);
    if (keyId !== null && denied.has(keyId)) {
      await drain(request);
      return answer(response, method, 403, "AccessDenied", "Access Denied");
    }
    const forwarded = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method,
        path: request.url,
        headers: forwardable(request.headers),
      },
      (peerResponse) => {
        response.writeHead(
          peerResponse.statusCode ?? 502,
          peerResponse.statusMessage,
          forwardable(peerResponse.headers),
        );
        peerResponse.pipe(response);
      },
    );
    // The peer gone: the client sees what it would see without the proxy, a dropped connection.
    forwarded.on("error", () => request.socket.destroy());
    request.pipe(forwarded);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const path = upstream.pathname.replace(/\/+$/, "");

  return {
    url: `http://127.0.0.1:${port}${path}`,
    failNext(count, fault, match = () => true) {
      for (let i = 0; i < count; i++) faults.push({ fault, match });
    },
    denyAccessKey(accessKeyId) {
      denied.add(accessKeyId);
    },
    requests: () => seen.map((entry) => ({ ...entry })),
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
