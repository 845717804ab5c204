/**
 * The log pump's CPU weight follows the tasks it serves. One logmon moves
 * every task's logs, where Nomad runs a logmon per task: as a single process
 * it would get one process's share of a busy machine while the tasks it
 * serves get one each, and their writes would block on full pipes (20 tasks
 * writing flat out at load 9-12 moved 140-290 MB/s through one pump against
 * 700-1000 through 20 cats; with the weight of 20, 580-820).
 *
 * Linux weighs a nice value n as 1024 / 1.25^n, so N tasks' worth is nice
 * -log(N)/log(1.25), down to -20 (about 87 tasks). Two places hold it:
 *   - the pump's thread (setpriority on the calling thread): its weight
 *     among the processes of its cgroup;
 *   - the session's autogroup (/proc/self/autogroup), where the kernel groups
 *     processes by session in the root cpu cgroup: the logmon leads its own
 *     session, which would otherwise weigh as one process whatever its nice.
 * Only as much CPU as the bytes need is taken: an idle pump sleeps in poll.
 * Lowering a nice value needs CAP_SYS_NICE: without it the pump runs at
 * the weight it has, and says so once.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { errnoName } from "../log-layout/fifo.ts";
import { errno, setThreadNice } from "../runtime/libc.ts";
import { errorText, log } from "./log.ts";

/** The nice value's weight ratio per step (the kernel's sched_prio_to_weight table). */
const WEIGHT_PER_NICE_STEP = 1.25;
/** The strongest nice value Linux has. */
const MIN_NICE = -20;
const AUTOGROUP_FILE = "/proc/self/autogroup";

/** The nice value that weighs as much as `tasks` processes at nice 0 (0 for none or one). */
export function niceForTasks(tasks: number): number {
  if (tasks <= 1) return 0;
  return Math.max(MIN_NICE, -Math.round(Math.log(tasks) / Math.log(WEIGHT_PER_NICE_STEP)));
}

export class CpuWeight {
  private nice = 0;
  private warned = false;

  /** Sets the weight for `tasks` registered tasks; call on the pump's thread (the JS thread). */
  follow(tasks: number): void {
    const nice = niceForTasks(tasks);
    if (nice === this.nice) return;
    this.nice = nice;
    if (setThreadNice(nice) !== 0) this.refused("setpriority", errnoName(errno()));
    if (!leadsOwnSession()) return;
    try {
      writeFileSync(AUTOGROUP_FILE, String(nice));
    } catch (err) {
      // ENOENT: a kernel built without autogroups, where the thread's weight is all there is.
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") this.refused(AUTOGROUP_FILE, errorText(err));
    }
  }

  private refused(what: string, why: string): void {
    if (this.warned) return;
    this.warned = true;
    log("warn", "the log pump's CPU weight cannot follow its tasks; it competes as one process", { call: what, error: why, nice: this.nice });
  }
}

/** An autogroup is a session's: only a logmon leading its own session may change it, not the agent's it would share otherwise. */
function leadsOwnSession(): boolean {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const session = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]);
  return session === process.pid;
}
