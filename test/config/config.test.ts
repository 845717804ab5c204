import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, loadAgentConfig } from "../../src/config/load.ts";
import { nvidiaPluginConfig } from "../../src/config/schema.ts";
import { tempDir } from "../helpers/index.ts";

const dir = tempDir();
let n = 0;
function file(name: string, text: string): string {
  const path = join(dir, `${n++}-${name}`);
  writeFileSync(path, text);
  return path;
}
const load = (paths: string[], extra: Partial<Parameters<typeof loadAgentConfig>[0]> = {}) =>
  loadAgentConfig({ dev: false, configPaths: paths, ...extra });

describe("agent config", () => {
  test("defaults: loopback, Nomad's port, INFO, raw_exec off", async () => {
    const { config } = await load([]);
    expect(config.bind_addr).toBe("127.0.0.1");
    expect(config.ports.http).toBe(4646);
    expect(config.log_level).toBe("INFO");
    expect(config.plugin.raw_exec.config.enabled).toBe(false);
    expect(config.client.gc_max_allocs).toBe(50);
    expect(config.client.max_kill_timeout).toBe(30_000);
  });

  test("-dev turns on the server, the client and raw_exec", async () => {
    const { config } = await load([], { dev: true });
    expect(config.server.enabled).toBe(true);
    expect(config.plugin.raw_exec.config.enabled).toBe(true);
  });

  test("an HCL file with Nomad's keys and blocks", async () => {
    const path = file(
      "agent.hcl",
      `data_dir = "/var/lib/x"
       log_level = "debug"
       ports { http = 5656 }
       client {
         enabled = true
         meta { team = "core" }
         gc_interval = "90s"
         reserved { memory = 512 }
       }
       plugin "raw_exec" {
         config {
           enabled = true
         }
       }`,
    );
    const { config, files } = await load([path]);
    expect(files).toEqual([path]);
    expect(config.data_dir).toBe("/var/lib/x");
    expect(config.log_level).toBe("DEBUG");
    expect(config.ports.http).toBe(5656);
    expect(config.client.meta).toEqual({ team: "core" });
    expect(config.client.gc_interval).toBe(90_000);
    expect(config.client.reserved.memory).toBe(512);
    expect(config.plugin.raw_exec.config.enabled).toBe(true);
  });

  test("JSON files, later files override earlier ones, maps merge", async () => {
    const a = file("a.json", JSON.stringify({ datacenter: "east", client: { meta: { a: "1" } } }));
    const b = file("b.hcl", `datacenter = "west"\nclient {\n  meta { b = "2" }\n}`);
    const { config } = await load([a, b]);
    expect(config.datacenter).toBe("west");
    expect(config.client.meta).toEqual({ a: "1", b: "2" });
  });

  test("a directory contributes its .hcl and .json files in name order", async () => {
    const sub = join(dir, "conf.d");
    mkdirSync(sub);
    writeFileSync(join(sub, "10-base.hcl"), `region = "eu"\ndatacenter = "one"`);
    writeFileSync(join(sub, "20-override.json"), JSON.stringify({ datacenter: "two" }));
    writeFileSync(join(sub, "notes.txt"), "ignored");
    const { config, files } = await load([sub]);
    expect(files.map((f) => f.split("/").pop())).toEqual(["10-base.hcl", "20-override.json"]);
    expect(config.region).toBe("eu");
    expect(config.datacenter).toBe("two");
  });

  test("flags override files", async () => {
    const path = file("f.hcl", `log_level = "WARN"\nbind_addr = "0.0.0.0"`);
    const { config } = await load([path], { logLevel: "error", bindAddr: "127.0.0.2", dataDir: "/d" });
    expect(config.log_level).toBe("ERROR");
    expect(config.bind_addr).toBe("127.0.0.2");
    expect(config.data_dir).toBe("/d");
  });

  test("-http-port sets ports.http; -bind with a port is refused naming the port's own keys", async () => {
    const { config } = await load([], { httpPort: 24646 });
    expect(config.ports.http).toBe(24646);
    const error = await load([], { bindAddr: "127.0.0.1:24646" }).catch((err: unknown) => err);
    expect((error as Error).message).toBe("command-line flags: bind_addr: expected an address without a port: the port is ports.http (or -http-port)");
    expect((await load([], { bindAddr: "::1" })).config.bind_addr).toBe("::1");
  });

  const bad: [string, string, string, RegExp][] = [
    ["an unknown key names the key and the file", "bad.hcl", `client {\n  bogus = 1\n}`, /bad\.hcl: unknown key "client\.bogus"/],
    ["a bad value names the key and what was expected", "bad.json", JSON.stringify({ ports: { http: "x" } }), /bad\.json: ports\.http: .*number/],
    ["a bad duration names the key", "dur.hcl", `client {\n  gc_interval = "soon"\n}`, /dur\.hcl: client\.gc_interval: invalid duration "soon"/],
    ["a bad log level lists the levels", "lvl.hcl", `log_level = "LOUD"`, /log_level: expected one of TRACE, DEBUG, INFO/],
    ["an unknown plugin is named", "plug.hcl", `plugin "podman" {\n}`, /unknown key "plugin\.podman"/],
    ["an unknown capability in allow_caps is named", "caps.hcl", `plugin "exec" {\n config {\n allow_caps = ["kill", "superpowers"]\n }\n}`, /plugin\.exec\.config\.allow_caps\.1: unknown capability/],
    ["a client option drover does not implement is refused by name", "opts.hcl", `client {\n options = { "docker.privileged.enabled" = "true" }\n}`, /unknown key "client\.options\.docker\.privileged\.enabled"/],
    ["a bad reserved port list names the file and the range", "res.hcl", `client {\n reserved {\n reserved_ports = "22,80-70"\n }\n}`, /res\.hcl: client\.reserved\.reserved_ports: invalid port range "80-70"/],
    ["HCL syntax errors carry line and column", "syntax.hcl", `client {\n  enabled =\n}`, /syntax\.hcl:\d+,\d+/],
    ["JSON syntax errors name the file", "syntax.json", `{"a":`, /syntax\.json: invalid JSON/],
  ];
  for (const [name, fileName, text, message] of bad) {
    test(name, async () => {
      const path = file(fileName, text);
      const error = await load([path]).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).toContain(path);
    });
  }

  test("a missing config path is named", async () => {
    await expect(load([join(dir, "nope.hcl")])).rejects.toThrow(/config path .*nope\.hcl does not exist/);
  });

  test("a bad flag value names the flag's key", async () => {
    await expect(load([], { logLevel: "chatty" })).rejects.toThrow(/command-line flags: log_level/);
  });

  test("an inverted dynamic port range is refused", async () => {
    const path = file("ports.hcl", `client {\n  min_dynamic_port = 30000\n  max_dynamic_port = 20000\n}`);
    await expect(load([path])).rejects.toThrow(/min_dynamic_port \(30000\) is above client\.max_dynamic_port \(20000\)/);
  });

  test("server.oidc_issuer: a URL, or refused by name", async () => {
    const good = file("oidc.hcl", `server {\n  oidc_issuer = "https://nomad.example.com"\n}`);
    expect((await load([good])).config.server.oidc_issuer).toBe("https://nomad.example.com");
    expect((await load([])).config.server.oidc_issuer).toBeUndefined();
    const bad = file("oidc-bad.hcl", `server {\n  oidc_issuer = "nomad"\n}`);
    await expect(load([bad])).rejects.toThrow(/server\.oidc_issuer: must be a URL/);
  });

  test("client.servers with the embedded server off joins Nomad servers; the RPC port defaults to 4647", async () => {
    const path = file("client.hcl", `client {\n  servers = ["10.0.0.2", "10.0.0.3:5647"]\n}\nserver {\n  enabled = false\n}\nadvertise {\n  http = "10.0.0.12"\n}`);
    const { config } = await load([path]);
    expect(config.client.servers).toEqual(["10.0.0.2:4647", "10.0.0.3:5647"]);
    expect(config.server.enabled).toBe(false);
    expect(config.advertise.http).toBe("10.0.0.12");
  });

  test("client.node_pool defaults to Nomad's default pool and client.disk_limit to filesystem; a bad pool name, the built-in pool all, or an unknown limit is refused by name", async () => {
    expect((await load([])).config.client.node_pool).toBe("default");
    expect((await load([])).config.client.disk_limit).toBe("filesystem");
    await expect(load([file("limit.hcl", `client {\n  disk_limit = "quota"\n}`)])).rejects.toThrow(/client\.disk_limit/);
    expect((await load([file("pool.hcl", `client {\n  node_pool = "gpu-a"\n}`)])).config.client.node_pool).toBe("gpu-a");
    await expect(load([file("pool.hcl", `client {\n  node_pool = "a b"\n}`)])).rejects.toThrow(/client\.node_pool: a node pool's name is 1 to 128 letters/);
    await expect(load([file("pool.hcl", `client {\n  node_pool = "all"\n}`)])).rejects.toThrow(/client\.node_pool: no node may join the built-in node pool "all"/);
  });

  test("client.servers beside the embedded server, a bad server port, or a client with no server at all are refused by name", async () => {
    const both = file("both.hcl", `client {\n  servers = ["10.0.0.2:4647"]\n}`);
    await expect(load([both])).rejects.toThrow(/client\.servers names remote Nomad servers: set server\.enabled = false/);
    const badPort = file("port.hcl", `client {\n  servers = ["10.0.0.2:99999"]\n}\nserver {\n  enabled = false\n}`);
    await expect(load([badPort])).rejects.toThrow(/client\.servers\.0: expected host:port/);
    const none = file("none.hcl", `server {\n  enabled = false\n}`);
    await expect(load([none])).rejects.toThrow(/client\.enabled needs a server/);
    await expect(load([both], { dev: true })).rejects.toThrow(/client\.servers/);
  });

  test("acl.enabled without the embedded server is refused at load, before a data dir is touched", async () => {
    const path = file("acl.hcl", `acl {\n  enabled = true\n}\nserver {\n  enabled = false\n}\nclient {\n  servers = ["10.0.0.2"]\n}`);
    await expect(load([path])).rejects.toThrow(ConfigError);
    await expect(load([path])).rejects.toThrow(/acl\.enabled needs the embedded server \(server\.enabled\)/);
  });
});

describe("the NVIDIA plugin's config", () => {
  test("is on by default, and takes Nomad's keys under either of its names", async () => {
    expect(nvidiaPluginConfig((await load([])).config)).toEqual({ enabled: true, ignored_gpu_ids: [], fingerprint_period: 60_000 });
    const hcl = file("nvidia.hcl", `plugin "nvidia-gpu" {\n config {\n ignored_gpu_ids = ["GPU-a"]\n fingerprint_period = "5s"\n }\n}\n`);
    expect(nvidiaPluginConfig((await load([hcl])).config)).toEqual({ enabled: true, ignored_gpu_ids: ["GPU-a"], fingerprint_period: 5_000 });
    const off = file("off.json", JSON.stringify({ plugin: { nvidia: { config: { enabled: false } } } }));
    expect(nvidiaPluginConfig((await load([off])).config).enabled).toBe(false);
  });

  test("a bad key or value is named; both names at once are refused", async () => {
    const bad = file("bad.json", JSON.stringify({ plugin: { nvidia: { config: { fingerprint_period: "soon", stats_period: "1s" } } } }));
    await expect(load([bad])).rejects.toThrow(/plugin\.nvidia\.config\.(fingerprint_period|stats_period)/);
    const both = file("both.json", JSON.stringify({ plugin: { nvidia: {}, "nvidia-gpu": {} } }));
    await expect(load([both])).rejects.toThrow('plugin "nvidia" and plugin "nvidia-gpu" are the same plugin: configure it once');
  });
});

describe("the docker plugin's config", () => {
  test("Nomad's gc and auth keys, with Nomad's defaults, and Docker's certs.d dir; allow_caps and allow_privileged; unknown keys are refused by name", async () => {
    expect((await load([])).config.plugin.docker.config).toEqual({
      allow_privileged: false,
      auth: {},
      insecure_registries: [],
      certs_dir: "/etc/docker/certs.d",
      gc: { image: true, image_delay: 180_000 },
    });
    const hcl = file(
      "docker.hcl",
      `plugin "docker" {\n config {\n certs_dir = "/srv/certs.d"\n auth {\n config = "/etc/docker-auth.json"\n }\n gc {\n image = false\n image_delay = "10s"\n }\n }\n}\n`,
    );
    expect((await load([hcl])).config.plugin.docker.config).toMatchObject({ certs_dir: "/srv/certs.d", auth: { config: "/etc/docker-auth.json" }, gc: { image: false, image_delay: 10_000 } });
    const privileged = file("privileged.json", JSON.stringify({ plugin: { docker: { config: { allow_privileged: true } } } }));
    expect((await load([privileged])).config.plugin.docker.config).toMatchObject({ allow_privileged: true });
    const caps = file("caps.hcl", `plugin "docker" {\n config {\n allow_caps = ["chown", "bogus"]\n }\n}\n`);
    await expect(load([caps])).rejects.toThrow(/plugin\.docker\.config\.allow_caps\.1: unknown capability/);
    const helper = file("helper.json", JSON.stringify({ plugin: { docker: { config: { auth: { helper: "ecr" } } } } }));
    await expect(load([helper])).rejects.toThrow(/unknown key "plugin\.docker\.config\.auth\.helper"/);
  });
});

describe("host volumes", () => {
  test("client { host_volume \"name\" { path read_only } } blocks, in HCL or Nomad's JSON, read_only false unless said", async () => {
    const hcl = file(
      "volumes.hcl",
      'client {\n  host_volume "shared" {\n    path = "/srv/shared"\n  }\n  host_volume "certs" {\n    path      = "/etc/ssl/certs"\n    read_only = true\n  }\n}\n',
    );
    expect((await load([hcl])).config.client.host_volume).toEqual({
      shared: { path: "/srv/shared", read_only: false },
      certs: { path: "/etc/ssl/certs", read_only: true },
    });
    const json = file("volumes.json", JSON.stringify({ client: { host_volume: [{ data: [{ path: "/srv/data" }] }] } }));
    expect((await load([json])).config.client.host_volume).toEqual({ data: { path: "/srv/data", read_only: false } });
    expect((await load([])).config.client.host_volume).toEqual({});
  });

  test("a relative path, /, an unknown key or a bad name is refused naming the volume", async () => {
    const relative = file("relative.json", JSON.stringify({ client: { host_volume: { data: { path: "srv/data" } } } }));
    await expect(load([relative])).rejects.toThrow(/client\.host_volume\.data\.path: must be an absolute path/);
    const root = file("root.json", JSON.stringify({ client: { host_volume: { all: { path: "/" } } } }));
    await expect(load([root])).rejects.toThrow(/client\.host_volume\.all\.path: must not be \//);
    const unknown = file("unknown.json", JSON.stringify({ client: { host_volume: { data: { path: "/srv", owner: "me" } } } }));
    await expect(load([unknown])).rejects.toThrow(/client\.host_volume\.data\.owner/);
    const badName = file("bad-name.json", JSON.stringify({ client: { host_volume: { "a b": { path: "/srv" } } } }));
    await expect(load([badName])).rejects.toThrow("a host volume's name must be non-empty, without whitespace or '/'");
  });
});
