/**
 * The embedded server's Variables endpoint (Nomad 1.x's
 * nomad/variables_endpoint.go and its state store's check-and-set).
 *
 *   read(path)    ──> read on the path ──> the variable, items decrypted
 *   list(prefix)  ──> only the variables the caller may list, by namespace
 *                     and path, a page at a time (per_page, next_token)
 *   set(path)     ──> write on the path ──> checked (path, items, 64 KiB)
 *                     ──> cas? the variable's ModifyIndex must be it (0: must not exist)
 *                     ──> sealed by the keyring ──> stored at the next index
 *   delete(path)  ──> destroy on the path ──> cas? as set (0: must not exist)
 *
 * A failed check-and-set is not an error: it answers the variable as it
 * stands (its items only for a caller that may read it; a zero-valued one
 * where it does not exist), which the HTTP layer sends as Nomad's 409.
 * Permission is judged here, per path, as Nomad judges it; the HTTP guard
 * only resolves the caller.
 */
import type { Caller } from "../../acl/resolver.ts";
import type { VariableCapability } from "../../acl/capabilities.ts";
import { PERMISSION_DENIED } from "../../acl/resolver.ts";
import { nowNanos } from "../../structs/common.ts";
import { ALL_NAMESPACES, variableProblem, type Variable, type VariableItems, type VariableMetadata } from "../../structs/variable.ts";
import { DEFAULT_NAMESPACE } from "../../structs/job.ts";
import type { ServerStateDb } from "../../state/server/db.ts";
import { ServerError, invalid } from "../errors.ts";
import type { NamespaceUsers } from "../endpoints/namespace.ts";
import type { Keyring } from "./keyring.ts";
import { VariablesState, type StoredVariable } from "./state.ts";

export interface VariableListQuery {
  /** A namespace, or "*" for every one. */
  namespace: string;
  prefix: string;
  /** Most variables in the page; 0 for all. */
  perPage: number;
  /** Where the page starts: the token a previous page answered. */
  nextToken: string;
  reverse: boolean;
}

export interface VariablePage {
  variables: VariableMetadata[];
  /** The token of the next page, "" after the last. */
  nextToken: string;
}

export interface VariableWrite {
  namespace: string;
  path: string;
  /** Check-and-set: the ModifyIndex the variable must have now (0: it must not exist). */
  cas?: number;
}

/** A write's outcome: done at `index` (a set answers what it wrote), or refused by its check-and-set. */
export type VariableWriteResult = { conflict: false; index: number; variable?: Variable } | { conflict: true; variable: Variable };

const denied = () => new ServerError("denied", PERMISSION_DENIED);

/** Nomad's pagination token: namespace and path, "." between. */
const tokenOf = (meta: VariableMetadata) => `${meta.Namespace}.${meta.Path}`;

export class VariablesEndpoint {
  private readonly state: VariablesState;

  constructor(
    db: ServerStateDb,
    private readonly keyring: Keyring,
  ) {
    this.state = new VariablesState(db);
  }

  get index(): number {
    return this.state.index;
  }

  /** The index a blocking read of this variable compares: its ModifyIndex, or the table's while it does not exist. */
  readIndex(namespace: string, path: string): number {
    return this.state.get(namespace, path)?.meta.ModifyIndex ?? this.state.index;
  }

  /** Resolves once `indexOf()` passes `minIndex`, after `timeoutMs`, or on abort. */
  waitFor(indexOf: () => number, minIndex: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return this.state.watch.wait(() => indexOf() > minIndex, timeoutMs, signal);
  }

  /** What the variables still keep in `namespace`, for NamespaceEndpoint's delete (Nomad refuses a namespace with variables). */
  readonly usersOfNamespace: NamespaceUsers = (namespace) => {
    const count = this.state.all(namespace).length;
    return count === 0 ? [] : [count === 1 ? "1 variable" : `${count} variables`];
  };

  /** Re-encrypts every variable with the keyring's active key (a full rotation); how many it did. */
  rekey(): number {
    return this.state.reseal((row) => this.keyring.encrypt(this.keyring.decrypt(row.sealed)));
  }

  /** How many variables key `keyId` still encrypts. */
  sealedWith(keyId: string): number {
    return this.state.all(undefined).filter((row) => row.sealed.keyId === keyId).length;
  }

  read(caller: Caller, namespace: string, path: string): Variable | undefined {
    this.authorize(caller, namespace, path, "read");
    const stored = this.state.get(namespace, path);
    return stored && this.open(stored);
  }

  list(caller: Caller, query: VariableListQuery): VariablePage {
    const all = this.state.all(query.namespace === ALL_NAMESPACES ? undefined : query.namespace);
    if (query.reverse) all.reverse();
    const page: VariableMetadata[] = [];
    for (const { meta } of all) {
      const token = tokenOf(meta);
      if (query.nextToken !== "" && (query.reverse ? token > query.nextToken : token < query.nextToken)) continue;
      if (!meta.Path.startsWith(query.prefix) || !allowed(caller, meta.Namespace, meta.Path, "list")) continue;
      if (query.perPage > 0 && page.length === query.perPage) return { variables: page, nextToken: token };
      page.push(meta);
    }
    return { variables: page, nextToken: "" };
  }

  set(caller: Caller, write: VariableWrite, items: VariableItems): VariableWriteResult {
    const namespace = write.namespace || DEFAULT_NAMESPACE;
    this.authorize(caller, namespace, write.path, "write");
    const problem = variableProblem(namespace, write.path, items);
    if (problem) throw invalid(problem);
    const existing = this.state.get(namespace, write.path);
    const conflict = this.casConflict(caller, write, namespace, existing);
    if (conflict) return conflict;
    const sealed = this.keyring.encrypt(JSON.stringify(items));
    return this.state.write((index) => {
      const now = nowNanos();
      const meta: VariableMetadata = {
        Namespace: namespace,
        Path: write.path,
        CreateIndex: existing?.meta.CreateIndex ?? index,
        CreateTime: existing?.meta.CreateTime ?? now,
        ModifyIndex: index,
        ModifyTime: now,
      };
      return { result: { conflict: false, index, variable: { ...meta, Items: { ...items } } }, put: { meta, sealed } };
    });
  }

  delete(caller: Caller, write: VariableWrite): VariableWriteResult {
    const namespace = write.namespace || DEFAULT_NAMESPACE;
    this.authorize(caller, namespace, write.path, "destroy");
    const existing = this.state.get(namespace, write.path);
    const conflict = this.casConflict(caller, write, namespace, existing);
    if (conflict) return conflict;
    // Deleting what is not there changes nothing; it needs no index of its own.
    if (!existing) return { conflict: false, index: this.state.index };
    return this.state.write((index) => ({ result: { conflict: false, index }, remove: { namespace, path: write.path } }));
  }

  close(): void {
    this.state.close();
  }

  /**
   * Nomad's check-and-set: cas=0 means "must not exist" (a delete of what is
   * not there succeeds); any other value must be the variable's ModifyIndex.
   */
  private casConflict(caller: Caller, write: VariableWrite, namespace: string, existing: StoredVariable | undefined): VariableWriteResult | undefined {
    if (write.cas === undefined) return undefined;
    if (existing === undefined) {
      if (write.cas === 0) return undefined;
      return { conflict: true, variable: { Namespace: namespace, Path: write.path, CreateIndex: 0, CreateTime: 0, ModifyIndex: 0, ModifyTime: 0, Items: null } };
    }
    if (write.cas !== 0 && write.cas === existing.meta.ModifyIndex) return undefined;
    const readable = allowed(caller, namespace, write.path, "read");
    return { conflict: true, variable: readable ? this.open(existing) : { ...existing.meta, Items: null } };
  }

  private open(stored: StoredVariable): Variable {
    return { ...stored.meta, Items: JSON.parse(this.keyring.decrypt(stored.sealed)) as VariableItems };
  }

  private authorize(caller: Caller, namespace: string, path: string, capability: VariableCapability): void {
    if (!allowed(caller, namespace, path, capability)) throw denied();
  }
}

function allowed(caller: Caller, namespace: string, path: string, capability: VariableCapability): boolean {
  return caller.acl.allowVariableOperation(namespace, path, capability, caller.claim);
}
