/** Units drover converts between, each defined once. */

/** Nomad's "MB" in resources, disks and logs counts mebibytes. */
export const BYTES_PER_MIB = 1024 * 1024;

/** Nomad's JSON carries every duration and time stamp in nanoseconds; timers take milliseconds. */
export const NS_PER_MS = 1_000_000;
export const NS_PER_SECOND = 1_000 * NS_PER_MS;

/** /proc/PID/stat and cpuacct.stat count CPU time in USER_HZ ticks, fixed at 100 per second for user space. */
export const NS_PER_USER_HZ_TICK = 10_000_000;
