/**
 * libc calls that may block, declared `nonblocking`: Deno runs each on one of
 * its blocking threads and the JS thread awaits the result.
 */

interface BlockingCalls {
  poll(fds: Int32Array, count: number | bigint, timeoutMs: number): Promise<number>;
  epoll_wait(epollFd: number, events: Uint8Array, max: number, timeoutMs: number): Promise<number>;
  read(fd: number, buffer: Uint8Array, length: number | bigint): Promise<number | bigint>;
}

let calls: BlockingCalls | undefined;

export function blockingCalls(): BlockingCalls {
  calls ??= Deno.dlopen("libc.so.6", {
    poll: { parameters: ["buffer", "u64", "i32"], result: "i32", nonblocking: true },
    epoll_wait: { parameters: ["i32", "buffer", "i32", "i32"], result: "i32", nonblocking: true },
    read: { parameters: ["i32", "buffer", "u64"], result: "i64", nonblocking: true },
  }).symbols as unknown as BlockingCalls;
  return calls;
}
