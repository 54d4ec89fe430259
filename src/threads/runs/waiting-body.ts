import { utf8Pieces } from "./json-stream.ts";

/**
 * The JSON body of `/wait` and `/join`, sent as a stream: a newline every few seconds keeps proxies
 * from timing out a long run (JSON allows leading whitespace), then the result.
 */
export function waitingBody(result: Promise<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let timer: ReturnType<typeof setInterval> | undefined;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      timer = setInterval(() => controller.enqueue(encoder.encode("\n")), 5_000);
      result.then(
        (json) => {
          clearInterval(timer);
          for (const piece of utf8Pieces(json)) controller.enqueue(piece);
          controller.close();
        },
        (error) => {
          clearInterval(timer);
          controller.error(error);
        },
      );
    },
    cancel() {
      clearInterval(timer);
    },
  });
}
