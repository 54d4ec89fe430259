/**
 * Server CPU time from Linux /proc: the user + system time of a whole process tree (the root and every
 * descendant, e.g. wrangler with its two workerd processes). Read it before and after a measured window;
 * the difference is the CPU the server spent on that window's operations. Elsewhere than Linux it
 * returns undefined and the bench reports no CPU figures.
 */
import { readdirSync, readFileSync } from "node:fs";

/**
 * Clock ticks per second of utime/stime in /proc/<pid>/stat (`getconf CLK_TCK`): 100 on every Linux
 * the kernel ABI supports (USER_HZ is fixed at 100 for user space), so it is hard-coded here.
 */
const CLOCK_TICKS_PER_S = 100;

interface ProcStat {
  ppid: number;
  ticks: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may hold spaces: split only after its closing one.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    // fields[0] is state (field 3); ppid is field 4, utime field 14, stime field 15.
    return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

/**
 * CPU ms used so far by `root` and all its descendants (found by scanning every process's ppid), or
 * undefined when the root is gone or /proc cannot be read. CPU of descendants that already exited is
 * not counted (it moves to the parent's cutime only when reaped), which is fine for long-lived servers.
 */
export function treeCpuMs(root: number): number | undefined {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return undefined;
  }
  const children = new Map<number, number[]>();
  const stats = new Map<number, ProcStat>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const stat = readStat(pid);
    if (!stat) continue;
    stats.set(pid, stat);
    const siblings = children.get(stat.ppid);
    if (siblings) siblings.push(pid);
    else children.set(stat.ppid, [pid]);
  }
  if (!stats.has(root)) return undefined;
  let ticks = 0;
  const pending = [root];
  const seen = new Set<number>();
  while (pending.length) {
    const pid = pending.pop() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    ticks += stats.get(pid)?.ticks ?? 0;
    pending.push(...(children.get(pid) ?? []));
  }
  return (ticks * 1000) / CLOCK_TICKS_PER_S;
}
