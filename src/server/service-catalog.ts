/**
 * The embedded server's native service catalog. Instances live in memory:
 * each is owned by a running task, whose client registers it again after an
 * agent restart (the service hook's poststart runs on reattach), so nothing
 * is lost that a restart would not bring back, and nothing stale survives
 * one.
 */
import type { ServiceRegistration, ServiceRegistrationListStub } from "../structs/service-registration.ts";

export class ServiceCatalog {
  private readonly instances = new Map<string, ServiceRegistration>();
  private index = 0;

  upsert(registrations: readonly Omit<ServiceRegistration, "CreateIndex" | "ModifyIndex">[]): void {
    this.index++;
    for (const registration of registrations) {
      const existing = this.instances.get(registration.ID);
      this.instances.set(registration.ID, { ...registration, CreateIndex: existing?.CreateIndex ?? this.index, ModifyIndex: this.index });
    }
  }

  remove(ids: readonly string[]): void {
    for (const id of ids) this.instances.delete(id);
  }

  /** Every instance of `name`, in registration order. */
  get(name: string, namespace = "default"): ServiceRegistration[] {
    return [...this.instances.values()].filter((item) => item.ServiceName === name && item.Namespace === namespace);
  }

  list(): ServiceRegistrationListStub[] {
    const byNamespace = new Map<string, Map<string, Set<string>>>();
    for (const item of this.instances.values()) {
      const names = byNamespace.get(item.Namespace) ?? new Map<string, Set<string>>();
      byNamespace.set(item.Namespace, names);
      const tags = names.get(item.ServiceName) ?? new Set<string>();
      names.set(item.ServiceName, tags);
      for (const tag of item.Tags) tags.add(tag);
    }
    return [...byNamespace].map(([Namespace, names]) => ({
      Namespace,
      Services: [...names].sort(([a], [b]) => a.localeCompare(b)).map(([ServiceName, tags]) => ({ ServiceName, Tags: [...tags].sort() })),
    }));
  }
}
