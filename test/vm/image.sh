#!/bin/sh
# Builds the VM suite's guest, or finds it already built, and prints its
# directory: vmlinuz (Debian 12's kernel) and root.cpio.zst (a Debian 12
# root with systemd, booted as the initramfs: no disk image, no bootloader).
#
# Everything comes from Debian's packages: the root from mmdebstrap, the
# kernel unpacked from linux-image-amd64's package (no initramfs to generate).
# The kernel's modules stay out but for those a host loads on demand and the
# suite needs (sock_diag's inet_diag, tcp_diag, udp_diag).
#
# The cache key is this file, the package list and the kernel package's
# version: a change to any builds afresh. DROVER_VM_CACHE moves the cache
# (default ~/.cache/drover-vm). Needs root, mmdebstrap, cpio, zstd, apt.
set -eu

SUITE=bookworm
PACKAGES="systemd,systemd-sysv,kmod,procps,curl,bpftool"
MODULES="kernel/net/ipv4/inet_diag.ko kernel/net/ipv4/tcp_diag.ko kernel/net/ipv4/udp_diag.ko"
CACHE_ROOT="${DROVER_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/drover-vm}"

KERNEL_PACKAGE="$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')"
[ -n "$KERNEL_PACKAGE" ] || { echo "image.sh: apt knows no linux-image-amd64 (run apt-get update)" >&2; exit 1; }
KERNEL_VERSION="$(apt-cache policy "$KERNEL_PACKAGE" | awk '/Candidate:/ { print $2; exit }')"
KEY="$( { echo "$SUITE $PACKAGES $MODULES $KERNEL_PACKAGE $KERNEL_VERSION"; cat "$0"; } | sha256sum | cut -c1-16)"
OUT="$CACHE_ROOT/$KEY"
if [ -f "$OUT/ready" ]; then
  echo "$OUT"
  exit 0
fi

mkdir -p "$CACHE_ROOT"
WORK="$(mktemp -d "$CACHE_ROOT/build.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT INT TERM
ROOT="$WORK/root"

mmdebstrap --quiet --variant=minbase --include="$PACKAGES" "$SUITE" "$ROOT" >&2
(cd "$WORK" && apt-get download -q "$KERNEL_PACKAGE" >&2)
dpkg-deb -x "$WORK"/"$KERNEL_PACKAGE"_*.deb "$WORK/kernel"
KVER="${KERNEL_PACKAGE#linux-image-}"
cp "$WORK/kernel/boot/vmlinuz-$KVER" "$WORK/vmlinuz"
for module in $MODULES; do
  mkdir -p "$ROOT/lib/modules/$KVER/$(dirname "$module")"
  cp "$WORK/kernel/lib/modules/$KVER/$module" "$ROOT/lib/modules/$KVER/$module"
done
cp "$WORK/kernel/lib/modules/$KVER"/modules.builtin* "$WORK/kernel/lib/modules/$KVER/modules.order" "$ROOT/lib/modules/$KVER/"
depmod -b "$ROOT" "$KVER"

# The guest has no network and no login: a root without a password on the serial console is for debugging by hand.
echo drover-vm >"$ROOT/etc/hostname"
sed -i 's/^root:[^:]*:/root::/' "$ROOT/etc/shadow"
rm -rf "$ROOT/var/cache/apt" "$ROOT/var/lib/apt/lists" "$ROOT/usr/share/doc" "$ROOT/usr/share/man" "$ROOT/usr/share/locale"
(cd "$ROOT" && find . | cpio --quiet -o -H newc | zstd -q -T0 -3 >"$WORK/root.cpio.zst")

mkdir -p "$OUT"
mv "$WORK/vmlinuz" "$WORK/root.cpio.zst" "$OUT/"
touch "$OUT/ready"
echo "$OUT"
