/** The driver's view of the alloc's group network (TaskConfig.network, .netns). */
import type { Allocation } from "../../structs/alloc.ts";
import type { TaskConfig } from "../../drivers/driver.ts";
import { netnsPath } from "./netns.ts";

export function groupNetwork(alloc: Allocation): Pick<TaskConfig, "network" | "netns"> {
  switch (alloc.AllocatedResources.Shared.Networks[0]?.Mode) {
    case "none":
      return { network: "none" };
    case "bridge":
      return { network: "bridge", netns: netnsPath(alloc.ID) };
    default:
      return { network: "host" };
  }
}
