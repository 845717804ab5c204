/** Evaluations (Nomad's Eval endpoint): the record of each scheduling decision and the allocs it placed. */
import type { AllocListStub } from "../../structs/alloc.ts";
import type { Evaluation } from "../../structs/evaluation.ts";
import { notFound } from "../errors.ts";
import { byPrefix, EVERY_NAMESPACE, type EndpointContext } from "./context.ts";

export class EvalEndpoint {
  constructor(private readonly ctx: EndpointContext) {}

  list(prefix?: string, inNamespace: (namespace: string) => boolean = EVERY_NAMESPACE): Evaluation[] {
    const { store } = this.ctx;
    return byPrefix(store.read.evals.listed((evaluation) => evaluation, store.coldLists.evals), prefix, inNamespace);
  }

  get(id: string): Evaluation {
    const evaluation = this.ctx.store.read.evals.get(id);
    if (!evaluation) throw notFound(`evaluation "${id}"`);
    return evaluation;
  }

  allocations(id: string): AllocListStub[] {
    // An evaluation's allocs are its job's: only that group is read.
    const { JobID } = this.get(id);
    return this.ctx.store.read.allocs.ofGroup(JobID).filter((alloc) => alloc.EvalID === id).map((alloc) => this.ctx.store.stub(alloc));
  }
}
