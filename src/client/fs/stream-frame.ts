/**
 * Nomad's StreamFrame, the unit of a non-plain log stream: JSON objects
 * written back to back, fields omitted when empty (Go's omitempty).
 *
 *   {"Offset":1024,"Data":"aGVsbG8K","File":"alloc/logs/web.stdout.0"}   data
 *   {"Offset":1024,"File":"alloc/logs/web.stdout.0","FileEvent":"file deleted"}
 *   {}                                                                    heartbeat
 *
 * Offset is the file offset just past the frame's data, which is where a
 * client resumes.
 */
export const FILE_DELETED = "file deleted";
export const FILE_TRUNCATED = "file truncated";

export interface StreamFrame {
  Offset?: number;
  /** Base64 of the bytes. */
  Data?: string;
  File?: string;
  FileEvent?: string;
}

const encoder = new TextEncoder();

export function encodeFrame(frame: { offset: number; data?: Uint8Array; file: string; event?: string }): Uint8Array {
  const out: StreamFrame = {};
  if (frame.offset !== 0) out.Offset = frame.offset;
  if (frame.data && frame.data.length > 0) out.Data = Buffer.from(frame.data.buffer, frame.data.byteOffset, frame.data.length).toString("base64");
  out.File = frame.file;
  if (frame.event) out.FileEvent = frame.event;
  return encoder.encode(JSON.stringify(out));
}

export const HEARTBEAT_FRAME = encoder.encode("{}");
