/**
 * The agent's data directory and where each part keeps its files:
 *
 *   <data_dir>/client/state.db   client state (allocs, task states, handles)   } client.state_dir
 *   <data_dir>/client/client-id  this node's ID                               } overrides
 *   <data_dir>/server/state.db   the embedded server's state
 *   <data_dir>/alloc/<alloc-id>/ alloc dirs (client.alloc_dir overrides)
 *   <data_dir>/run/              executors' sockets and exit files (short paths)
 *   <data_dir>/logmon/           the log pump's socket, lock and saved tasks
 */
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { detachMountsUnder } from "../runtime/mounts.ts";
import { mountsUnder } from "../lib/procfs.ts";
import type { AgentConfig } from "../config/schema.ts";
import { ConfigError } from "../config/load.ts";

export interface DataDir {
  root: string;
  allocDir: string;
  /** The client's state dir: its database and the node ID. */
  clientDir: string;
  /** Made by the agent for -dev; removed at shutdown. */
  temporary: boolean;
  /** Removes the directory when the agent made it for -dev; otherwise does nothing. */
  discard(): void;
}

export function prepareDataDir(config: AgentConfig, dev: boolean): DataDir {
  let root: string;
  let temporary = false;
  if (config.data_dir) {
    root = resolve(config.data_dir);
  } else if (dev) {
    root = mkdtempSync(join(tmpdir(), "drover-dev-"));
    temporary = true;
  } else {
    throw new ConfigError("data_dir is required: set it in a config file or pass -data-dir (or use -dev)");
  }
  try {
    mkdirSync(root, { recursive: true, mode: 0o711 });
    accessSync(root, constants.W_OK);
  } catch (err) {
    throw new ConfigError(`data_dir ${root} is not a writable directory: ${(err as Error).message}`);
  }
  const allocDir = resolve(config.client.alloc_dir ?? join(root, "alloc"));
  const clientDir = resolve(config.client.state_dir ?? join(root, "client"));
  return {
    root,
    allocDir,
    clientDir,
    temporary,
    discard() {
      if (!temporary) return;
      // A secrets tmpfs of an alloc that was never destroyed would make the delete fail; a host
      // volume's bind would lead it into the host's files: the dir stays while anything is mounted.
      detachMountsUnder(root);
      const left = mountsUnder(root);
      if (left.length > 0) throw new Error(`cannot remove the data dir ${root}: still mounted: ${left.join(", ")}`);
      rmSync(root, { recursive: true, force: true });
    },
  };
}
