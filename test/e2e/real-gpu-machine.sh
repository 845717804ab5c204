#!/bin/bash
# The device suite on a machine with a real NVIDIA GPU (the `device` tool's
# machines: no network, no Node.js or Bun, root). It runs there from the
# repository root with two files carried in .gpu/ (listed in .git/info/exclude),
# made here first:
#   mkdir -p .gpu && xz -T2 -9 -c node_modules/bun/bin/bun.exe > .gpu/bun.xz
#   tar -cJf .gpu/nm.tar.xz --exclude=node_modules/{bun,@deno,deno,esbuild,@esbuild,@esbuild-kit,typescript,playwright-core,tsx,drizzle-kit,bun-types,@types} node_modules
# (about 36 and 6 MB: the tree travels whole, 64 MiB at most). Then, with the
# tool: run `OUT=$OUT bash test/e2e/real-gpu-machine.sh`, carry [".gpu"].
# What it showed on an H100 is in docs/devices.md ("On a real GPU").
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/gpu-run.log") 2>&1
echo "== host"; date -u; uname -r; nproc
nvidia-smi -L
nvidia-smi --query-gpu=name,uuid,driver_version,memory.total,pci.bus_id,temperature.gpu,power.draw --format=csv
ldconfig -p | grep -E "libnvidia-ml" || find / -xdev -name 'libnvidia-ml.so*' 2>/dev/null | head -3
command -v cc xz python3
mount | grep -E "cgroup" | head -3
unxz_to_stdout() {
  if command -v xz >/dev/null; then xz -dc "$1"; else python3 -c 'import lzma,sys,shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' "$1"; fi
}
mkdir -p /opt/bun && unxz_to_stdout .gpu/bun.xz > /opt/bun/bun && chmod +x /opt/bun/bun
export PATH=/opt/bun:$PATH
[ -d node_modules ] || unxz_to_stdout .gpu/nm.tar.xz | tar -x
echo "== build"; bun --version; bun build.ts || exit 1
echo "== tests"
bun test --timeout 60000 test/e2e/real-gpu.test.ts test/devices test/e2e/devices.test.ts test/metrics/devices.test.ts \
  test/server/devices.test.ts test/nsenter/devices.test.ts test/cgroups/device-filter.test.ts test/client/devices \
  test/client/taskrunner/devices-hook.test.ts test/jobspec/devices.test.ts
status=$?
echo "rc=$status"
exit $status
