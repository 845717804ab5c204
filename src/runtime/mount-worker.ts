/**
 * The mount thread's script (a Worker, runtime/mount-thread.ts): each
 * message is one mount call, made here synchronously, so errno is this
 * thread's own and the agent's thread never waits in the kernel for it.
 * An entry point of the compiled binary (build.ts).
 */
import { type MountReply, type MountRequest, runMountCall } from "./mount-calls.ts";

const port = globalThis as unknown as {
  onmessage: ((event: MessageEvent<MountRequest>) => void) | null;
  postMessage(reply: MountReply): void;
};

port.onmessage = (event) => port.postMessage(runMountCall(event.data));
