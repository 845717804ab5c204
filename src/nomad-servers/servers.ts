/**
 * The Nomad servers this client may talk to, best first (Nomad's
 * client/servers manager, simplified): the configured addresses to begin
 * with, then every heartbeat's list of the region's servers. A server that
 * fails a call goes to the back, so the next call tries another; configured
 * addresses stay on the list, so a cluster whose servers all restarted on the
 * same addresses is found again.
 */
export class ServerList {
  private servers: string[];

  constructor(private readonly configured: readonly string[]) {
    if (configured.length === 0) throw new Error("no Nomad servers configured");
    this.servers = [...configured];
  }

  /** The server to try next. */
  current(): string {
    return this.servers[0]!;
  }

  all(): readonly string[] {
    return this.servers;
  }

  /** The call to `address` failed: try the others first. */
  failed(address: string): void {
    const at = this.servers.indexOf(address);
    if (at < 0 || this.servers.length === 1) return;
    this.servers.splice(at, 1);
    this.servers.push(address);
  }

  /** The servers a heartbeat named; the one in use stays first if it is among them. */
  update(discovered: readonly string[]): void {
    if (discovered.length === 0) return;
    const current = this.current();
    const merged = [...new Set([...discovered, ...this.configured])];
    if (merged.includes(current)) merged.splice(merged.indexOf(current), 1), merged.unshift(current);
    this.servers = merged;
  }
}
