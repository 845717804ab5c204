/** Nomad's defaults for group bridge networking (client/allocrunner/networking_bridge_linux.go, client config). */

/** The host bridge allocs join (client.bridge_network_name). */
export const DEFAULT_BRIDGE_NAME = "nomad";
/** Its subnet, 172.26.64.1 being the bridge (client.bridge_network_subnet). */
export const DEFAULT_BRIDGE_SUBNET = "172.26.64.0/20";
/** util-linux's nsenter: joins a raw_exec task (and its exec sessions) to the alloc's namespace and execs in place (same pid). */
export const UTIL_LINUX_NSENTER = "/usr/bin/nsenter";
/** client.cni_path: Nomad's own default first, then where Debian's containernetworking-plugins puts them. */
export const DEFAULT_CNI_PATH = "/opt/cni/bin:/usr/lib/cni";
