/**
 * An env whose bindings count subrequests: every Durable Object call (RPC method or fetch), R2
 * operation and queue send is one, a D1 query is one (and a D1 query, see d1.ts); outbound `fetch`
 * is counted by `guardFetch`. Past the invocation's limit the call fails with Workers' error.
 * The usage meter (usage.ts) counts R2 operations by class and queue messages here too.
 */
import { guardD1 } from "./d1.ts";
import { countSubrequest } from "./invocation.ts";
import type { InvocationLimits } from "./limits.ts";
import { meterQueueMessages, meterR2 } from "./usage.ts";

/** What the usage meter counts of a call of a binding's method. */
type Meter = (method: string, args: unknown[]) => void;

/** `method` counted as one subrequest per call (and metered); a call past the limit rejects. */
function counted(method: (...args: unknown[]) => unknown, self: object, meter?: () => void) {
  return (...args: unknown[]) => {
    const refusal = countSubrequest();
    if (refusal) return Promise.reject(refusal);
    meter?.();
    return Reflect.apply(method, self, args);
  };
}

/**
 * A Durable Object stub whose calls count. A Proxy over the RPC stub itself: each method read from it
 * is the stub's own, called on the stub, so results (streams, pipelined promises) are untouched.
 */
function guardStub<S extends object>(stub: S): S {
  return new Proxy(stub, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      // `then` is read by `await` (a stub is not a promise); id and name are plain properties.
      if (typeof property === "symbol" || property === "then" || typeof value !== "function") return value;
      return counted(value as (...args: unknown[]) => unknown, target);
    },
  });
}

function guardNamespace(namespace: DurableObjectNamespace): DurableObjectNamespace {
  return new Proxy(namespace, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (property === "get" || property === "getByName") {
        return (...args: unknown[]) => guardStub(Reflect.apply(value, target, args) as object);
      }
      return value.bind(target);
    },
  });
}

/** An R2 bucket or queue: each method call is one subrequest, so is each call on a multipart upload. */
function guardService<T extends object>(service: T, meter: Meter): T {
  const uploads = (upload: object) => guardService(upload, meter);
  return new Proxy(service, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      const method = value as (...args: unknown[]) => unknown;
      const name = String(property);
      if (property === "createMultipartUpload") {
        return (...args: unknown[]) =>
          (counted(method, target, () => meter(name, args))(...args) as Promise<object>).then(uploads);
      }
      if (property === "resumeMultipartUpload") {
        return (...args: unknown[]) => uploads(Reflect.apply(method, target, args) as object);
      }
      return (...args: unknown[]) => counted(method, target, () => meter(name, args))(...args);
    },
  });
}

const meterBucket: Meter = (method) => meterR2(method);
/** `send` sends one message, `sendBatch` one per message (counted in an array; any other iterable is not read twice). */
const meterQueue: Meter = (method, args) => {
  if (method === "send") meterQueueMessages(1);
  else if (method === "sendBatch") meterQueueMessages(Array.isArray(args[0]) ? args[0].length : 1);
};

/** How a binding is guarded, by its runtime class (duck typing would match RPC service bindings). */
function guardBinding(value: unknown, limits: InvocationLimits): unknown {
  if (value === null || typeof value !== "object") return value;
  switch ((value as { constructor?: { name?: string } }).constructor?.name) {
    case "D1Database":
      return guardD1(value as D1Database, limits);
    case "DurableObjectNamespace":
      return guardNamespace(value as DurableObjectNamespace);
    case "R2Bucket":
      return guardService(value, meterBucket);
    case "WorkerQueue":
      return guardService(value, meterQueue);
    default:
      return value;
  }
}

const guardedEnvs = new WeakMap<object, object>();

/** `env` with its D1, Durable Object, R2 and queue bindings guarded (one copy per env). */
export function guardEnv<E extends object>(env: E, limits: InvocationLimits): E {
  let guarded = guardedEnvs.get(env);
  if (!guarded) {
    guarded = Object.fromEntries(
      Object.entries(env).map(([name, value]) => [name, guardBinding(value, limits)] as const),
    );
    guardedEnvs.set(env, guarded);
    guardedEnvs.set(guarded, guarded);
  }
  return guarded as E;
}

let fetchGuarded = false;

/** Counts every outbound `fetch` of an invocation as a subrequest (once per isolate). */
export function guardFetch(): void {
  if (fetchGuarded) return;
  fetchGuarded = true;
  const original = globalThis.fetch;
  globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) => {
    const refusal = countSubrequest();
    return refusal ? Promise.reject(refusal) : original(input, init);
  }) as typeof fetch;
}
