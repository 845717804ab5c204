import { describe, expect, test } from "bun:test";
import { ListenerList } from "../../src/lib/listener-list.ts";

describe("ListenerList", () => {
  test("each item is called once per forEach, in the order added, however often it was added", () => {
    const list = new ListenerList<string>();
    const seen: string[] = [];
    list.add("a");
    list.add("b");
    list.add("a");
    list.forEach((item) => seen.push(item));
    expect(seen).toEqual(["a", "b"]);
  });

  test("what add returns removes the item; delete of one not there changes nothing", () => {
    const list = new ListenerList<string>();
    const removeA = list.add("a");
    list.add("b");
    removeA();
    list.delete("c");
    const seen: string[] = [];
    list.forEach((item) => seen.push(item));
    expect(seen).toEqual(["b"]);
  });

  test("forEach calls the items as they were when it began: one removed or added by a call is changed for the next round", () => {
    const list = new ListenerList<() => void>();
    const calls: string[] = [];
    const second = () => calls.push("second");
    const added = () => calls.push("added");
    list.add(() => {
      calls.push("first");
      list.delete(second);
      list.add(added);
    });
    list.add(second);
    list.forEach((each) => each());
    expect(calls).toEqual(["first", "second"]);
    calls.length = 0;
    list.forEach((each) => each());
    expect(calls).toEqual(["first", "added"]);
  });
});
