import { describe, expect, test } from "bun:test";
import { formatBytes } from "../../src/cli/format.ts";

describe("formatBytes", () => {
  test("rounds as Nomad's CLI does: one decimal below 10, none above", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(9)).toBe("9 B");
    expect(formatBytes(835_584)).toBe("816 KiB");
    expect(formatBytes(3.14 * 1024 * 1024)).toBe("3.1 MiB");
    expect(formatBytes(64 * 1024 * 1024)).toBe("64 MiB");
    expect(formatBytes(1.5 * 1024 ** 3)).toBe("1.5 GiB");
  });
});
