/**
 * Publishes every device instance's numeric statistics as gauges, one per
 * statistic, labelled by the device: "GPU utilization" of an NVIDIA GPU
 * becomes `nomad.client.host.device.gpu_utilization{device_vendor="nvidia",
 * device_type="gpu", device_name="Tesla T4", device_id="GPU-..."}`. A
 * fraction ("Memory state": used / total) gives the numerator, and the
 * denominator under `<name>_max`. Nomad publishes no device gauges; these
 * names are drover's, built from Nomad's statistic names. An instance that
 * goes away takes its series with it.
 */
import type { Gauge } from "prom-client";
import type { DeviceGroupStats, StatValue } from "../structs/device.ts";
import type { Metrics } from "./registry.ts";

const LABELS = ["device_vendor", "device_type", "device_name", "device_id"] as const;
type Labels = Record<(typeof LABELS)[number], string>;

/** "GPU utilization" -> "gpu_utilization", "ECC L1 errors" -> "ecc_l1_errors". */
export function gaugeSuffix(statName: string): string {
  return statName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
}

function numbers(value: StatValue): { value: number; max?: number } | undefined {
  const numerator = value.IntNumeratorVal ?? value.FloatNumeratorVal;
  if (numerator === undefined) return undefined;
  const denominator = value.IntDenominatorVal ?? value.FloatDenominatorVal;
  return denominator === undefined ? { value: numerator } : { value: numerator, max: denominator };
}

export function deviceMetrics(metrics: Metrics): (stats: DeviceGroupStats[]) => void {
  const gauges = new Map<string, Gauge<(typeof LABELS)[number]>>();
  /** The series set last time: gauge name -> label sets, to remove those that are gone. */
  let previous = new Map<string, Labels[]>();

  const gauge = (name: string, help: string) => {
    let found = gauges.get(name);
    if (!found) {
      found = metrics.gauge(name, help, LABELS);
      gauges.set(name, found);
    }
    return found;
  };

  return (stats) => {
    const current = new Map<string, Labels[]>();
    const set = (name: string, help: string, labels: Labels, value: number) => {
      gauge(name, help).set(labels, value);
      const seen = current.get(name);
      if (seen) seen.push(labels);
      else current.set(name, [labels]);
    };
    for (const group of stats) {
      for (const [id, instance] of Object.entries(group.InstanceStats)) {
        const labels: Labels = { device_vendor: group.Vendor, device_type: group.Type, device_name: group.Name, device_id: id };
        for (const [statName, value] of Object.entries(instance.Stats?.Attributes ?? {})) {
          const reading = numbers(value);
          if (!reading) continue;
          const name = `nomad.client.host.device.${gaugeSuffix(statName)}`;
          const unit = value.Unit ? ` (${value.Unit})` : "";
          set(name, `${statName}${unit}: ${value.Desc ?? ""}`, labels, reading.value);
          if (reading.max !== undefined) set(`${name}_max`, `The whole of ${statName}${unit}`, labels, reading.max);
        }
      }
    }
    for (const [name, series] of previous) {
      const kept = new Set((current.get(name) ?? []).map((labels) => JSON.stringify(labels)));
      for (const labels of series) if (!kept.has(JSON.stringify(labels))) gauges.get(name)?.remove(labels);
    }
    previous = current;
  };
}
