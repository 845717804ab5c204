/** Shell completion: the words drover offers next, and the setup line each shell takes. */
import { describe, expect, test } from "bun:test";
import { completeCommandLine, completions, completionScript } from "../../src/cli/completion.ts";
import { UsageError } from "../../src/cli/flags.ts";

const COMMANDS = ["job", "alloc", "node", "deployment", "status", "version"];

describe("completion", () => {
  test("commands, subcommands, nested groups and a command's flags", () => {
    expect(completions(COMMANDS, ["de"])).toEqual(["deployment"]);
    expect(completions(COMMANDS, ["job", "st"])).toEqual(["status", "stop"]);
    expect(completions(COMMANDS, ["job", "periodic", ""])).toEqual(["force"]);
    expect(completions(COMMANDS, ["job", "status", "-js"])).toEqual(["-json"]);
    expect(completions(COMMANDS, ["alloc", "fs", "-"])).toContain("-stat");
    expect(completions(COMMANDS, ["alloc", "fs", "-"])).toContain("-address");
    expect(completions(COMMANDS, ["alloc", "fs", "3f2a9c1e", "-st"])).toEqual(["-stat"]);
    expect(completions(COMMANDS, ["nosuch", ""])).toEqual([]);
  });

  test("the line comes from COMP_LINE up to COMP_POINT (bash, zsh) or after --fish", () => {
    expect(completeCommandLine(COMMANDS, ["drover", "st", "job"], { COMP_LINE: "drover job st", COMP_POINT: "13" })).toEqual(["status", "stop"]);
    expect(completeCommandLine(COMMANDS, ["--fish", "drover", "node", "dr"], {})).toEqual(["drain"]);
  });

  test("each shell's setup calls drover back; another shell is refused", () => {
    expect(completionScript("bash", "/usr/local/bin/drover")).toBe(`complete -o default -C "'/usr/local/bin/drover' __complete" drover`);
    expect(completionScript("zsh", "/usr/local/bin/drover")).toStartWith("autoload -U +X bashcompinit && bashcompinit\n");
    expect(completionScript("fish", "/usr/local/bin/drover")).toBe(`complete -c drover -f -a "('/usr/local/bin/drover' __complete --fish (commandline -cp))"`);
    expect(() => completionScript("tcsh", "drover")).toThrow(new UsageError('unknown shell "tcsh" (bash, zsh or fish)'));
  });
});
