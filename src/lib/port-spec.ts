/** Port lists as Nomad writes them in agent configs and reserved ports. */

/** Nomad's ReservedHostPorts syntax: "22,80,8000-8080". Throws naming the bad part. */
export function parsePortSpec(spec: string): number[] {
  const ports: number[] = [];
  for (const part of spec.split(",").map((item) => item.trim()).filter(Boolean)) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(part);
    const low = Number(match?.[1]);
    const high = match?.[2] === undefined ? low : Number(match[2]);
    if (!match || low < 1 || high > 65535 || low > high) throw new Error(`invalid port range "${part}" in "${spec}"`);
    for (let port = low; port <= high; port++) ports.push(port);
  }
  return ports;
}
