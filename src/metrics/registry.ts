/**
 * The agent's metrics, under Nomad's names so dashboards carry over
 * (`nomad.client.host.memory.total`, ...). prom-client keeps the values and
 * writes Prometheus text; GET /v1/metrics without a format gets Nomad's JSON
 * shape, with the dotted names.
 */
import { Counter, Gauge, Registry } from "prom-client";

export interface MetricsJson {
  Timestamp: string;
  Gauges: { Name: string; Value: number; Labels: Record<string, string> }[];
  Counters: {
    Name: string;
    Count: number;
    Sum: number;
    Rate: number;
    Min: number;
    Max: number;
    Mean: number;
    Stddev: number;
    Labels: Record<string, string>;
  }[];
  Samples: never[];
  Points: never[];
}

/** "nomad.client.host.memory.total" -> "nomad_client_host_memory_total" */
function promName(dotted: string): string {
  return dotted.replace(/[^a-zA-Z0-9_:]/g, "_");
}

function stringLabels(labels: Record<string, string | number | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(labels)) if (value !== undefined) out[key] = String(value);
  return out;
}

export class Metrics {
  private readonly registry = new Registry();
  private readonly dotted = new Map<string, string>();

  constructor(private readonly constantLabels: Record<string, string> = {}) {
    this.registry.setDefaultLabels(constantLabels);
  }

  gauge<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
    this.dotted.set(promName(name), name);
    return new Gauge({ name: promName(name), help, labelNames, registers: [this.registry] });
  }

  counter<L extends string = never>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    this.dotted.set(promName(name), name);
    return new Counter({ name: promName(name), help, labelNames, registers: [this.registry] });
  }

  prometheus(): Promise<string> {
    return this.registry.metrics();
  }

  get prometheusContentType(): string {
    return this.registry.contentType;
  }

  async json(): Promise<MetricsJson> {
    const out: MetricsJson = { Timestamp: new Date().toISOString(), Gauges: [], Counters: [], Samples: [], Points: [] };
    for (const metric of await this.registry.getMetricsAsJSON()) {
      const name = this.dotted.get(metric.name) ?? metric.name;
      for (const value of metric.values) {
        const labels = stringLabels({ ...this.constantLabels, ...value.labels });
        // prom-client types this as a numeric enum, but the JSON carries the name.
        if ((metric.type as unknown) === "counter") {
          out.Counters.push({
            Name: name,
            Count: value.value,
            Sum: value.value,
            Rate: 0,
            Min: value.value,
            Max: value.value,
            Mean: value.value,
            Stddev: 0,
            Labels: labels,
          });
        } else {
          out.Gauges.push({ Name: name, Value: value.value, Labels: labels });
        }
      }
    }
    return out;
  }
}
