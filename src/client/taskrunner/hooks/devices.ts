/**
 * Gives the task the device instances placement reserved for it (Nomad's
 * device hook): each plugin says what the task needs for its instances, the
 * environment (NVIDIA_VISIBLE_DEVICES) and, for an isolated task, the device
 * nodes and mounts its root gets. Run before every start, so a restarted
 * task gets them again, and a device that went away fails the start.
 */
import type { AllocatedDeviceResource } from "../../../structs/device.ts";
import type { DeviceReservation } from "../../../devices/plugin.ts";
import type { PrestartRequest, PrestartResponse, TaskHook } from "./hook.ts";

export interface DeviceReserver {
  reserve(allocated: AllocatedDeviceResource): DeviceReservation;
}

export function devicesHook(reserver: DeviceReserver): TaskHook {
  return {
    name: "devices",
    async prestart(req: PrestartRequest): Promise<PrestartResponse> {
      const allocated = req.alloc.AllocatedResources.Tasks[req.task.Name]?.Devices ?? [];
      const response: Required<Pick<PrestartResponse, "env" | "devices" | "mounts">> = { env: {}, devices: [], mounts: [] };
      for (const group of allocated) {
        const reservation = reserver.reserve(group);
        Object.assign(response.env, reservation.env);
        response.devices.push(...reservation.devices);
        response.mounts.push(...reservation.mounts);
      }
      return response;
    },
  };
}
