/**
 * The Cron Trigger for `npm start`. wrangler dev never fires a Worker's scheduled handler on its
 * own, so at the start of every minute this calls miniflare's scheduled route with each of the
 * Worker's cron expressions due that minute and that minute as `scheduledTime`: the same handler and
 * the same event the deployed Cron Trigger delivers.
 */

import { join } from "node:path";
import { CronExpressionParser } from "cron-parser";
import { PROJECT_ROOT } from "./deployment.ts";

const MINUTE_MS = 60_000;
/** A tick still unanswered after this is given up on (and logged), before the next minute's. */
const TICK_TIMEOUT_MS = 55_000;

/** The `[triggers] crons` of wrangler.toml, read by wrangler's own config reader. */
export async function configuredCrons(configPath = join(PROJECT_ROOT, "wrangler.toml")): Promise<string[]> {
  const { unstable_readConfig } = await import("wrangler");
  return unstable_readConfig({ config: configPath }, { hideWarnings: true }).triggers?.crons ?? [];
}

/** The expressions that fire at `minute` (a UTC minute boundary, ms), as Cloudflare evaluates them: in UTC. */
export function cronsDueAt(crons: string[], minute: number): string[] {
  return crons.filter((cron) => {
    try {
      return (
        CronExpressionParser.parse(cron, { tz: "UTC", currentDate: new Date(minute - 1) })
          .next()
          .getTime() === minute
      );
    } catch {
      return false;
    }
  });
}

/** The URL the scheduled route answers on for a server listening on `ip`:`port`. */
export function localBaseUrl(ip: string, port: string | number): string {
  const host = ip === "0.0.0.0" || ip === "*" ? "127.0.0.1" : ip === "::" ? "[::1]" : ip.includes(":") ? `[${ip}]` : ip;
  return `http://${host}:${port}`;
}

/** Miniflare's scheduled route, which `npm start` serves. */
export const LOCAL_SCHEDULED_PATH = "/cdn-cgi/local/scheduled";
/** wrangler dev's scheduled route (its proxy Worker forwards it to Miniflare's), for `npm run dev`. */
export const WRANGLER_DEV_SCHEDULED_PATH = "/cdn-cgi/handler/scheduled";

export interface MinuteTickerOptions {
  baseUrl: string;
  /** The runtime's scheduled route: LOCAL_SCHEDULED_PATH (the default) or WRANGLER_DEV_SCHEDULED_PATH. */
  scheduledPath?: string;
  crons: string[];
  log?: (message: string) => void;
  /** Injected by tests; Date.now otherwise. */
  now?: () => number;
  fetch?: typeof fetch;
}

export interface MinuteTicker {
  stop(): void;
}

/**
 * Fires each minute boundary once, from the next one on: a timer that fires late (a suspended
 * machine) fires the minute it lands in, not every minute it missed, as Cloudflare does not replay
 * missed triggers. A failing tick is logged and the next minute fires as usual.
 */
export function startMinuteTicker(options: MinuteTickerOptions): MinuteTicker {
  const now = options.now ?? Date.now;
  const send = options.fetch ?? fetch;
  const log = options.log ?? ((message: string) => console.error(message));
  const stopping = new AbortController();
  for (const cron of options.crons.filter((expression) => !parses(expression)))
    log(`[minute tick] cannot parse cron "${cron}" from wrangler.toml; it will not fire locally`);
  let timer: NodeJS.Timeout | undefined;
  let lastFired = -Infinity;

  const fire = async (minute: number, cron: string) => {
    const url = `${options.baseUrl}${options.scheduledPath ?? LOCAL_SCHEDULED_PATH}?cron=${encodeURIComponent(cron)}&time=${minute}`;
    const at = new Date(minute).toISOString();
    try {
      const response = await send(url, {
        signal: AbortSignal.any([stopping.signal, AbortSignal.timeout(TICK_TIMEOUT_MS)]),
      });
      if (!response.ok)
        log(
          `[minute tick] ${at} "${cron}": the scheduled handler answered ${response.status} ${(await response.text()).slice(0, 500)}`,
        );
      else await response.body?.cancel();
    } catch (error) {
      if (!stopping.signal.aborted) log(`[minute tick] ${at} "${cron}": ${(error as Error).message}`);
    }
  };

  const arm = (target: number) => {
    timer = setTimeout(
      () => {
        // Never ahead of the boundary (a timer may fire a millisecond early), never the same minute twice.
        const minute = Math.max(target, Math.floor(now() / MINUTE_MS) * MINUTE_MS);
        if (minute > lastFired) {
          lastFired = minute;
          for (const cron of cronsDueAt(options.crons, minute)) void fire(minute, cron);
        }
        if (!stopping.signal.aborted) arm(minute + MINUTE_MS);
      },
      Math.max(0, target - now()),
    );
  };
  arm(Math.floor(now() / MINUTE_MS) * MINUTE_MS + MINUTE_MS);

  return {
    stop() {
      stopping.abort();
      clearTimeout(timer);
    },
  };
}

function parses(cron: string): boolean {
  try {
    CronExpressionParser.parse(cron, { tz: "UTC" });
    return true;
  } catch {
    return false;
  }
}
