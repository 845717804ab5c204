/**
 * Why a task's logs trail `cat` end to end (docs/performance.md, "The final
 * build (2026-11-27 05:00)"): a splice from a FIFO into a file holds the
 * FIFO's mutex while it writes the page cache, and the task's writer spins
 * on it. This bare loop (no log pump: the reader alone, 1 MiB pipes,
 * blocking splices) puts these readers of `yes | head -c 1G > fifo` side by
 * side, interleaved, median of --rounds:
 *   cat            `cat fifo > file` (the floor)
 *   direct splice  FIFO -> file, 1 MiB a call, as the log pump does
 *                  where no stage is held
 *   direct 64K, direct 16K
 *                  the same in smaller calls, so each holds the FIFO's lock
 *                  for less of the copy
 *   two stages     FIFO -> a private pipe (moves buffer references) -> file,
 *                  so the copy holds only the private pipe's lock
 *   read + write   read(2) 1 MiB into this process, write(2) it out: what
 *                  the log pump does not do, since bytes between the two
 *                  calls would die with a killed pump
 *   tee, copy, read drop
 *                  the one copy-out found that a killed pump could resume
 *                  without loss or doubling: tee(2) the FIFO's bytes into a
 *                  private pipe (the FIFO keeps them), splice that into the
 *                  file, then read(2) them out of the FIFO into memory whose
 *                  last byte was first set to differ from the file's last
 *                  byte. Kept in a shared mapping, that byte would tell the
 *                  next pump whether the drop happened; here a private buffer
 *                  (the same copies and calls)
 *   the same, woken by epoll
 *                  nonblocking calls after epoll_wait(2), as the log pump
 *                  waits, reading as soon as the writer writes (no gather)
 *   tee, copy, null drop
 *                  the drop spliced to /dev/null instead: no copy, but
 *                  nothing tells a next pump whether it happened (a bound)
 * Beside each reader's speed: the writer pair's CPU (`yes` and `head`, what
 * the reader costs the task), the reader's own CPU, and the pages the machine allocated per GiB
 * (/proc/vmstat). Every reader's file takes one page per 4 KiB; the rest are
 * the FIFO's: a reader that copies bytes out (cat, read + write) or splices
 * them into the file releases the FIFO's pages in place, and the pipe hands
 * its writer those pages again; one that moves them to another pipe (the
 * stages) leaves the writer a fresh page for every 4 KiB it writes.
 *
 * `--pin`: the writer pair on CPU 0, the reader on CPU 1 (this process, and
 * cat), so that every row runs the same layout; unpinned, where the
 * scheduler puts the three decides as much as the reader does, and rows of
 * one run differ by 10-20 % from one round to the next.
 * Bun only (bun:ffi for the pipe-to-pipe splice).
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import { constants as osConstants, tmpdir } from "node:os";
import { join } from "node:path";
import {
  EPOLL_EVENT_BYTES,
  epollAdd,
  epollCreate,
  epollWait,
  errno,
  F_SETPIPE_SZ,
  fcntl,
  mkfifo,
  O_CLOEXEC_FLAG,
  pipe2,
  SPLICE_F_NONBLOCK,
  splicePipes,
  spliceToFile,
  sysClose,
  sysRead,
  tee,
} from "../src/runtime/libc.ts";
import { machineLine, median, pagesAllocated, printTable } from "./lib.ts";

const GiB = 1 << 30;
const PIPE_BYTES = 1 << 20;
const SPLICE_F_MOVE = 1;
const LINE = "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456";
const rounds = Number(process.argv[process.argv.indexOf("--rounds") + 1] ?? 5) || 5;
const PIN = process.argv.includes("--pin");
/** CPUs of the writer pair and of the reader under --pin. */
const WRITER_CPU = 0;
const READER_CPU = 1;
const pinned = (cpu: number) => (PIN ? `taskset -c ${cpu} ` : "");

type Reader = (fifo: string, out: string) => Promise<void>;

/** The writer pair of the round now running, for its CPU; cat, for its own. */
let writing: Bun.Subprocess | undefined;
let catReading: Bun.Subprocess | undefined;
const writer = (fifo: string) => {
  writing = Bun.spawn(["sh", "-c", `${pinned(WRITER_CPU)}yes ${LINE} | ${pinned(WRITER_CPU)}head -c ${GiB} > '${fifo}'`]);
  return writing;
};


const readers: Record<string, Reader> = {
  cat: async (fifo, out) => {
    const cat = (catReading = Bun.spawn(["sh", "-c", `exec ${pinned(READER_CPU)}cat '${fifo}' > '${out}'`]));
    const write = writer(fifo);
    if ((await cat.exited) !== 0 || (await write.exited) !== 0) throw new Error("cat or its writer failed");
  },
  "direct splice": (fifo, out) => spliced(fifo, out, (from, file, offset) => spliceToFile(from, file, offset, PIPE_BYTES, SPLICE_F_MOVE)),
  "direct 64K": (fifo, out) => spliced(fifo, out, (from, file, offset) => spliceToFile(from, file, offset, 64 * 1024, SPLICE_F_MOVE)),
  "direct 16K": (fifo, out) => spliced(fifo, out, (from, file, offset) => spliceToFile(from, file, offset, 16 * 1024, SPLICE_F_MOVE)),
  "read + write": (fifo, out) => {
    const buffer = Buffer.allocUnsafe(PIPE_BYTES);
    return spliced(fifo, out, (from, file) => {
      const got = readSync(from, buffer, 0, PIPE_BYTES, null);
      for (let done = 0; done < got; ) done += writeSync(file, buffer, done, got - done);
      return got;
    });
  },
  "tee, copy, read drop": (fifo, out) => teeCopyDrop(fifo, out, "read", false),
  "the same, woken by epoll": (fifo, out) => teeCopyDrop(fifo, out, "read", true),
  "tee, copy, null drop": (fifo, out) => teeCopyDrop(fifo, out, "null", false),
  "two stages": (fifo, out) =>
    withStage((stage) =>
      spliced(fifo, out, (from, file, offset) => {
        const moved = splicePipes(from, stage.write, PIPE_BYTES, SPLICE_F_MOVE);
        stage.drainInto(file, offset, moved);
        return moved;
      }),
    ),
};

/** A private pipe the size of the FIFO, for one reader's run. */
interface Stage {
  readonly write: number;
  /** Copies `bytes` (all it holds) into the file. */
  drainInto(file: number, offset: BigInt64Array, bytes: number): void;
}

async function withStage(run: (stage: Stage) => Promise<void>): Promise<void> {
  const [read, write] = pipe2(O_CLOEXEC_FLAG);
  fcntl(write, F_SETPIPE_SZ, PIPE_BYTES);
  const drainInto = (file: number, offset: BigInt64Array, bytes: number) => {
    for (let left = bytes; left > 0; ) {
      const written = spliceToFile(read, file, offset, left, SPLICE_F_MOVE);
      if (written <= 0) throw new Error("splice from the private pipe failed");
      left -= written;
    }
  };
  try {
    await run({ write, drainInto });
  } finally {
    sysClose(read);
    sysClose(write);
  }
}

/** The copy-out that keeps the FIFO's pages with its writer: tee, copy the copy into the file, drop from the FIFO. */
function teeCopyDrop(fifo: string, out: string, drop: "read" | "null", woken: boolean): Promise<void> {
  const dropped = new Uint8Array(PIPE_BYTES);
  const lastByte = Buffer.alloc(1);
  const devNull = openSync("/dev/null", "w");
  const devNullOffset = new BigInt64Array(1);
  // Woken as the log pump's waiter wakes: epoll_wait(2), then nonblocking calls.
  const epoll = woken ? epollCreate() : -1;
  const epollEvents = new Uint8Array(EPOLL_EVENT_BYTES);
  let watching = false;
  return withStage((stage) =>
    spliced(fifo, out, (from, file, offset) => {
      if (woken) {
        if (!watching && epollAdd(epoll, from) !== 0) throw new Error(`epoll_ctl ADD: errno ${errno()}`);
        watching = true;
        epollWait(epoll, epollEvents, 1, -1);
      }
      const copied = tee(from, stage.write, PIPE_BYTES, woken ? SPLICE_F_NONBLOCK : 0);
      if (copied < 0 && woken && errno() === osConstants.errno.EAGAIN) return STILL;
      if (copied <= 0) return copied;
      stage.drainInto(file, offset, copied);
      if (drop === "read") {
        readSync(file, lastByte, 0, 1, Number(offset[0]) - 1);
        dropped[copied - 1] = lastByte[0]! ^ 0xff;
        for (let left = copied; left > 0; ) left -= sysRead(from, dropped.subarray(copied - left, copied));
      } else {
        for (let left = copied; left > 0; ) left -= spliceToFile(from, devNull, devNullOffset, left, 0);
      }
      return copied;
    }),
  ).finally(() => {
    closeSync(devNull);
    if (epoll >= 0) sysClose(epoll);
  });
}

/** A nonblocking move that found nothing: wait again (not end of file). */
const STILL = -2;

/** Opens the FIFO (its writer started), grows it as the log pump does, and moves until end of file. */
async function spliced(fifo: string, out: string, move: (from: number, file: number, offset: BigInt64Array) => number): Promise<void> {
  const write = writer(fifo);
  const from = openSync(fifo, "r");
  fcntl(from, F_SETPIPE_SZ, PIPE_BYTES);
  const file = openSync(out, "w+");
  const offset = new BigInt64Array(1);
  try {
    for (;;) {
      const moved = move(from, file, offset);
      if (moved === 0) break;
      if (moved === STILL) continue;
      if (moved < 0) throw new Error("splice from the FIFO failed");
    }
  } finally {
    closeSync(from);
    closeSync(file);
  }
  if ((await write.exited) !== 0) throw new Error("the writer failed");
}

const root = mkdtempSync(join(tmpdir(), "drover-splice-stages-"));
if (PIN) Bun.spawnSync(["taskset", "-a", "-p", "-c", String(READER_CPU), String(process.pid)]);
const seconds: Record<string, number[]> = Object.fromEntries(Object.keys(readers).map((name) => [name, []]));
const readerCpu: Record<string, number[]> = Object.fromEntries(Object.keys(readers).map((name) => [name, []]));
const writerCpu: Record<string, number[]> = Object.fromEntries(Object.keys(readers).map((name) => [name, []]));
const pages: Record<string, number[]> = Object.fromEntries(Object.keys(readers).map((name) => [name, []]));
try {
  for (let round = 0; round < rounds; round++) {
    for (const [name, read] of Object.entries(readers)) {
      const dir = join(root, `${round}-${name.replace(" ", "-")}`);
      mkdirSync(dir);
      const fifo = join(dir, "fifo");
      if (mkfifo(fifo, 0o600) !== 0) throw new Error(`mkfifo ${fifo} failed`);
      const pagesBefore = pagesAllocated();
      const ownBefore = process.cpuUsage();
      const started = performance.now();
      await read(fifo, join(dir, "out"));
      seconds[name]!.push((performance.now() - started) / 1000);
      pages[name]!.push(pagesAllocated() - pagesBefore);
      const own = process.cpuUsage(ownBefore);
      const catCpu = catReading?.resourceUsage()?.cpuTime;
      readerCpu[name]!.push(name === "cat" ? (catCpu ? Number(catCpu.total) / 1e6 : Number.NaN) : (own.user + own.system) / 1e6);
      const cpu = writing?.resourceUsage()?.cpuTime;
      writerCpu[name]!.push(cpu ? Number(cpu.total) / 1e6 : Number.NaN);
      rmSync(dir, { recursive: true, force: true });
    }
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
const mbps = (name: string) => GiB / 1e6 / median(seconds[name]!);
printTable(
  `One FIFO, 1 GiB of 100-byte lines (yes | head -c), read ${Object.keys(readers).length} ways (median of ${rounds}, interleaved${PIN ? "; writers on CPU 0, reader on CPU 1" : ""})`,
  ["reader", "MB/s", "x cat", "writers' CPU s", "reader's CPU s", "pages allocated per GiB"],
  Object.keys(readers).map((name) => [name, mbps(name), mbps(name) / mbps("cat"), median(writerCpu[name]!), median(readerCpu[name]!), String(Math.round(median(pages[name]!)))]),
);
console.log(machineLine());
