/** Reading Nomad's back-to-back JSON stream frames in tests. */
import type { StreamFrame } from "../../../src/client/fs/stream-frame.ts";

/** Back-to-back JSON objects, as Nomad writes them. */
export function parseFrames(text: string): StreamFrame[] {
  const frames: StreamFrame[] = [];
  let depth = 0;
  let start = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === "\\") i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "{") {
      if (depth === 0) start = i;
      depth++;
    } else if (char === "}" && --depth === 0) frames.push(JSON.parse(text.slice(start, i + 1)) as StreamFrame);
  }
  return frames;
}

export const frameData = (frames: StreamFrame[]) => frames.map((frame) => Buffer.from(frame.Data ?? "", "base64").toString()).join("");

