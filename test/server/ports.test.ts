import { describe, expect, test } from "bun:test";
import { createServer, type Server as NetServer } from "node:net";
import { HostPorts, parseProcNet } from "../../src/server/scheduler/host-ports.ts";
import { parsePortSpec } from "../../src/lib/port-spec.ts";
import { PortLedger } from "../../src/server/scheduler/ports.ts";

const port = (Label: string, Value = 0) => ({ Label, Value, To: 0, HostNetwork: "default", IgnoreCollision: false });

describe("port allocation", () => {
  test("reserved port lists in Nomad's syntax", () => {
    expect(parsePortSpec("")).toEqual([]);
    expect(parsePortSpec("22, 80,8000-8003")).toEqual([22, 80, 8000, 8001, 8002, 8003]);
    expect(() => parsePortSpec("80-70")).toThrow('invalid port range "80-70"');
    expect(() => parsePortSpec("http")).toThrow('invalid port range "http"');
  });

  test("every port of the range is handed out once, then placement fails", () => {
    const ledger = new PortLedger([20001], new Set([20003]), { min: 20000, max: 20005 });
    const given: number[] = [];
    for (let i = 0; i < 4; i++) {
      const result = ledger.assign([], [port(`p${i}`)]);
      if (!result.ok) throw new Error(result.dimension);
      given.push(result.dynamic[0]!.Value);
    }
    expect(given.sort()).toEqual([20000, 20002, 20004, 20005]);
    expect(ledger.assign([], [port("more")])).toEqual({ ok: false, dimension: "network: dynamic port selection failed" });
  });

  test("static ports collide with taken ones; a failed assignment takes nothing", () => {
    const ledger = new PortLedger([8080], new Set(), { min: 20000, max: 20001 });
    expect(ledger.assign([port("web", 8080)], [])).toEqual({ ok: false, dimension: "network: reserved port collision web=8080" });
    // Two dynamic ports wanted, one free in range: nothing is taken.
    const narrow = new PortLedger([20000], new Set(), { min: 20000, max: 20001 });
    expect(narrow.assign([port("a", 9000)], [port("x"), port("y")]).ok).toBe(false);
    expect(narrow.assign([port("a", 9000)], [port("x")])).toMatchObject({ ok: true, reserved: [{ Value: 9000 }], dynamic: [{ Value: 20001 }] });
    // A static port in the dynamic range is never handed out dynamically afterwards.
    const mixed = new PortLedger([], new Set(), { min: 20000, max: 20001 });
    expect(mixed.assign([port("s", 20000)], [port("d")])).toMatchObject({ ok: true, dynamic: [{ Value: 20001 }] });
  });

  test("listening sockets on the host are seen", async () => {
    const listener: NetServer = createServer();
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const bound = (listener.address() as { port: number }).port;
    try {
      const hostPorts = new HostPorts();
      await hostPorts.refresh();
      expect(hostPorts.current().has(bound)).toBe(true);
    } finally {
      listener.close();
    }
    const table = "  sl  local_address rem_address   st\n   0: 0100007F:1F90 00000000:0000 0A\n   1: 0100007F:1F91 0100007F:9999 01\n";
    expect(parseProcNet(table, "0A")).toEqual([8080]);
    expect(parseProcNet(table, undefined)).toEqual([8080, 8081]);
  });
});
