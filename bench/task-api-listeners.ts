/**
 * What one task's API socket costs the agent, by the kind of listener behind
 * it: each kind in a fresh Bun process, N unix listeners made, anonymous
 * memory (Pss_Anon of /proc/self/smaps_rollup after a full GC) before and
 * after, per listener.
 *
 *   Bun.serve        what the agent runs today: an HTTP server per socket
 *   node:net         a bare listener per socket
 *   node:net + http  a bare listener per socket handing its connections to
 *                    one shared node:http server, the task attached to the
 *                    socket (checked: a request through one listener is
 *                    answered with that listener's task)
 *
 *   bun bench/task-api-listeners.ts [N]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer as createHttpServer, request } from "node:http";
import { createServer as createNetServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { machineLine, parseSmapsRollup, printTable } from "./lib.ts";

const KINDS = ["Bun.serve", "node:net", "node:net + http"] as const;
type Kind = (typeof KINDS)[number];
const KIB = 1024;
/** Time for the listeners' native parts to settle before memory is read again. */
const SETTLE_MS = 200;

const [, , first, second] = process.argv;

if (first === "--measure") await measure(second as Kind, Number(process.argv[4]));
else await compare(Number(first ?? 1000));

async function compare(count: number): Promise<void> {
  const rows: (string | number)[][] = [];
  for (const kind of KINDS) {
    const child = Bun.spawnSync([process.execPath, import.meta.path, "--measure", kind, String(count)], { stderr: "inherit" });
    if (child.exitCode !== 0) throw new Error(`measuring ${kind} failed (exit ${child.exitCode})`);
    const { perListenerKib, answered } = JSON.parse(child.stdout.toString()) as { perListenerKib: number; answered: string };
    rows.push([kind, perListenerKib, answered]);
  }
  printTable(`Memory per task API listener (${count} unix listeners in one Bun process; anonymous PSS after a full GC)`, ["listener", "KiB per listener", "a request through listener 0 answered"], rows);
  console.log(machineLine());
}

async function measure(kind: Kind, count: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "drover-bench-listeners-"));
  try {
    const shared = createHttpServer((req, res) => res.end((req.socket as Socket & { task?: string }).task ?? "none"));
    const keep: unknown[] = [];
    const before = anonBytes();
    for (let i = 0; i < count; i++) {
      const path = join(dir, `${i}.sock`);
      const task = `task-${i}`;
      if (kind === "Bun.serve") {
        keep.push(Bun.serve({ unix: path, fetch: () => new Response(task) }));
      } else {
        const server = createNetServer((socket) => {
          if (kind === "node:net") return socket.end(task);
          Object.assign(socket, { task });
          shared.emit("connection", socket);
        });
        await new Promise<void>((resolve) => server.listen(path, resolve));
        keep.push(server);
      }
    }
    await Bun.sleep(SETTLE_MS);
    const after = anonBytes();
    const answered = await ask(join(dir, "0.sock"), kind);
    console.log(JSON.stringify({ perListenerKib: (after - before) / count / KIB, answered }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
}

function anonBytes(): number {
  Bun.gc(true);
  return parseSmapsRollup(readFileSync("/proc/self/smaps_rollup", "utf8")).anon;
}

/** What listener 0 answers: an HTTP request for the HTTP kinds, the bytes it sends for a bare one. */
async function ask(socketPath: string, kind: Kind): Promise<string> {
  if (kind === "node:net") {
    const socket = await Bun.connect({ unix: socketPath, socket: { data() {} } });
    socket.end();
    return "n/a (no HTTP)";
  }
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path: "/" }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString()));
      res.on("end", () => resolve(body));
    });
    req.on("error", reject);
    req.end();
  });
}
