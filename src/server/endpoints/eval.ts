/** Evaluations (Nomad's Eval endpoint): the record of each scheduling decision and the allocs it placed. */
import type { AllocListStub } from "../../structs/alloc.ts";
import type { Evaluation } from "../../structs/evaluation.ts";
import { notFound } from "../errors.ts";
import { byPrefix, EVERY_NAMESPACE, type EndpointContext } from "./context.ts";

export class EvalEndpoint {
  constructor(private readonly ctx: EndpointContext) {}

  list(prefix?: string, inNamespace: (namespace: string) => boolean = EVERY_NAMESPACE): Evaluation[] {
    return byPrefix(this.ctx.store.read.evals.values(), prefix, inNamespace);
  }

  get(id: string): Evaluation {
    const evaluation = this.ctx.store.read.evals.get(id);
    if (!evaluation) throw notFound(`evaluation "${id}"`);
    return evaluation;
  }

  allocations(id: string): AllocListStub[] {
    this.get(id);
    return [...this.ctx.store.read.allocs.values()].filter((alloc) => alloc.EvalID === id).map((alloc) => this.ctx.store.stub(alloc));
  }
}
