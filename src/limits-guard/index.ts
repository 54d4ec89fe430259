/**
 * The limits guard: the local runtime (`npm start`, `npm run dev`) and every test suite enforce what
 * Cloudflare enforces and local workerd does not (limits.ts lists each limit and its source). On when
 * the `LIMITS_GUARD` var is "paid" or "free"; off (unset) in a deployment, where nothing is wrapped.
 */
import { DurableObject, env as workerEnv } from "cloudflare:workers";
import { guardEnv, guardFetch } from "./bindings.ts";
import { guardState } from "./durable-object-sql.ts";
import { inInvocation } from "./invocation.ts";
import { guardLimits, type InvocationLimits } from "./limits.ts";
import { checkMemoryAfter } from "./memory.ts";
import { type Entry, isUsageRequest, usageResponse } from "./usage.ts";

export { registerMemoryProbe } from "./memory.ts";

/** One invocation of the guard: counted, and failed when it leaves the isolate over its memory. */
function invoke<T>(limits: InvocationLimits, owner: object | null, entry: Entry, work: () => T): T {
  return inInvocation(limits, owner, () => checkMemoryAfter(work()), entry);
}

/**
 * The Worker's handlers, each call one invocation with guarded bindings (the handlers themselves when
 * off). The fetch handler also answers the usage meter's route (usage.ts), outside any invocation.
 */
export function guardWorker<H extends ExportedHandler<Env>>(handler: H): H {
  const limits = guardLimits(workerEnv as Env);
  if (!limits) return handler;
  guardFetch();
  const { fetch, scheduled, queue } = handler as ExportedHandler<Env>;
  const guarded: ExportedHandler<Env> = {
    ...handler,
    ...(fetch && {
      fetch: (request, env, ctx) =>
        isUsageRequest(request)
          ? usageResponse(request, env)
          : invoke(limits, null, { worker: "fetch" }, () => fetch(request, guardEnv(env, limits), ctx)),
    }),
    ...(scheduled && {
      scheduled: (controller, env, ctx) =>
        invoke(limits, null, { worker: "scheduled" }, () => scheduled(controller, guardEnv(env, limits), ctx)),
    }),
    ...(queue && {
      queue: (batch, env, ctx) =>
        invoke(limits, null, { worker: "queue" }, () => queue(batch, guardEnv(env, limits), ctx)),
    }),
  };
  return guarded as H;
}

type DurableObjectClass = new (ctx: DurableObjectState, env: Env) => DurableObject<Env>;

/**
 * An object may name the part of its class its usage counts under (a workspace partition's kind), from
 * the arguments of the call when it has not learnt it yet.
 */
interface LabelledObject {
  usageLabel?(args?: readonly unknown[]): string | undefined;
}

/**
 * A Durable Object class whose every entry (RPC method, fetch, alarm, WebSocket event) is one
 * invocation, with a guarded env and guarded SQLite (the class itself when off). The usage meter counts
 * its entries and SQLite rows under the class's name.
 */
export function guardDurableObject<C extends DurableObjectClass>(Base: C): C {
  const planLimits = guardLimits(workerEnv as Env);
  if (!planLimits) return Base;
  const limits: InvocationLimits = planLimits;
  const className = Base.name;
  const labelOf = (self: object, args?: readonly unknown[]) => (self as LabelledObject).usageLabel?.(args) ?? className;
  guardFetch();
  class Guarded extends (Base as DurableObjectClass) {
    constructor(ctx: DurableObjectState, env: Env) {
      super(ctx, guardEnv(env, limits));
    }
  }
  // The base class only takes a real DurableObjectState, and stores it with an assignment: this setter
  // keeps the guarded one instead, before the subclass's fields read `this.ctx`.
  Object.defineProperty(Guarded.prototype, "ctx", {
    set(this: object, ctx: DurableObjectState) {
      Object.defineProperty(this, "ctx", {
        value: guardState(ctx, () => labelOf(this)),
        writable: true,
        enumerable: true,
        configurable: true,
      });
    },
    configurable: true,
  });
  for (
    let prototype = Base.prototype as object | null;
    prototype && prototype !== DurableObject.prototype && prototype !== Object.prototype;
    prototype = Object.getPrototypeOf(prototype)
  ) {
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const descriptor = Object.getOwnPropertyDescriptor(prototype, name)!;
      if (
        name === "constructor" ||
        name === "usageLabel" ||
        Object.hasOwn(Guarded.prototype, name) ||
        typeof descriptor.value !== "function"
      ) {
        continue;
      }
      const method = descriptor.value as (...args: unknown[]) => unknown;
      Object.defineProperty(Guarded.prototype, name, {
        ...descriptor,
        value(this: object, ...args: unknown[]) {
          return invoke(limits, this, { object: labelOf(this, args), method: name }, () => method.apply(this, args));
        },
      });
    }
  }
  Object.defineProperty(Guarded, "name", { value: Base.name });
  return Guarded as unknown as C;
}
