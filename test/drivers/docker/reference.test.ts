/** Image references read as Docker reads them, and which registries may be reached over plain HTTP. */
import { describe, expect, test } from "bun:test";
import { parseReference } from "../../../src/drivers/docker/reference.ts";
import { mayUsePlainHttp } from "../../../src/drivers/docker/registry.ts";

describe("image references", () => {
  test("Docker Hub names, registries with ports, tags and digests", () => {
    expect(parseReference("busybox")).toMatchObject({ registry: "docker.io", host: "registry-1.docker.io", repository: "library/busybox", tag: "latest", name: "docker.io/library/busybox:latest" });
    expect(parseReference("grafana/loki:2.9")).toMatchObject({ repository: "grafana/loki", tag: "2.9" });
    expect(parseReference("127.0.0.1:5000/team/app:1")).toMatchObject({ registry: "127.0.0.1:5000", host: "127.0.0.1:5000", repository: "team/app", tag: "1" });
    const digest = `sha256:${"a".repeat(64)}`;
    expect(parseReference(`localhost/app@${digest}`)).toMatchObject({ registry: "localhost", repository: "app", digest, name: `localhost/app@${digest}` });
  });

  test("a bad reference is refused naming the field and why", () => {
    expect(() => parseReference("Busybox")).toThrow('image: "Busybox" is not an image reference: repository "library/Busybox" must be lowercase');
    expect(() => parseReference("app@sha256:12")).toThrow("the digest must be sha256: and 64 hex digits");
    expect(() => parseReference("app:bad tag")).toThrow('tag "bad tag" is not valid');
  });
});

describe("plain HTTP", () => {
  test("only for 127.0.0.0/8, localhost and the operator's insecure registries", () => {
    expect(mayUsePlainHttp("127.0.0.1:5000", [])).toBe(true);
    expect(mayUsePlainHttp("127.8.9.10", [])).toBe(true);
    expect(mayUsePlainHttp("localhost:5000", [])).toBe(true);
    expect(mayUsePlainHttp("10.0.0.5:5000", [])).toBe(false);
    expect(mayUsePlainHttp("registry.internal:5000", [])).toBe(false);
    expect(mayUsePlainHttp("registry.internal:5000", ["registry.internal:5000"])).toBe(true);
    expect(mayUsePlainHttp("registry.internal", ["registry.internal"])).toBe(true);
  });
});
