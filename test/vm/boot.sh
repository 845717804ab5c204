#!/bin/sh
# Boots the VM suite's guest once and prints its serial console.
#
#   test/vm/boot.sh IMAGE_DIR CASE [KERNEL_ARGS...]
#
# IMAGE_DIR is what image.sh printed. The guest's initramfs is the cached root
# followed by a second archive with this checkout's build (dist/), install.sh
# and the suite (guest/), which runs at boot with drover_vm.case=CASE and
# powers the guest off. KVM when /dev/kvm answers a probe boot quickly (a
# nested KVM that hangs does not), TCG otherwise; DROVER_VM_ACCEL=kvm|tcg
# decides instead. DROVER_VM_TIMEOUT (seconds, default 900) bounds the boot.
set -eu
IMAGE="$1"
CASE="$2"
shift 2
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
TIMEOUT="${DROVER_VM_TIMEOUT:-900}"
# Guest memory: the root and the 100 MiB binary live in RAM, beside the agent and its tasks.
MEMORY=3G
# A working KVM prints the kernel's first lines within a second or two.
KVM_PROBE_SECONDS=20

[ -x "$REPO/dist/drover" ] || { echo "boot.sh: no dist/drover (run bun build.ts)" >&2; exit 1; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT INT TERM

accel() {
  case "${DROVER_VM_ACCEL:-auto}" in
    kvm | tcg) echo "$DROVER_VM_ACCEL"; return ;;
  esac
  if [ -r /dev/kvm ] && [ -w /dev/kvm ] &&
    timeout "$KVM_PROBE_SECONDS" qemu-system-x86_64 -machine q35,accel=kvm -cpu host -m 256 -display none -no-reboot \
      -serial stdio -kernel "$IMAGE/vmlinuz" -append "console=ttyS0 panic=-1" 2>/dev/null | grep -q "Linux version"; then
    echo kvm
  else
    echo tcg
  fi
}

OVERLAY="$WORK/overlay"
mkdir -p "$OVERLAY/drover-vm/dist" "$OVERLAY/etc/systemd/system/multi-user.target.wants"
cp "$REPO/dist/drover" "$OVERLAY/drover-vm/dist/drover"
cp "$REPO/dist/SHA256SUMS" "$OVERLAY/drover-vm/dist/SHA256SUMS"
ln -s drover "$OVERLAY/drover-vm/dist/drover-linux-x64"
cp "$REPO/install.sh" "$HERE/guest/suite.sh" "$HERE"/guest/*.hcl "$OVERLAY/drover-vm/"
cp "$HERE/guest/drover-vm-suite.service" "$OVERLAY/etc/systemd/system/"
ln -s ../drover-vm-suite.service "$OVERLAY/etc/systemd/system/multi-user.target.wants/drover-vm-suite.service"
(cd "$OVERLAY" && find . | cpio --quiet -o -H newc) >"$WORK/overlay.cpio"
# The uncompressed archive first: the kernel reads archives after a compressed one less reliably.
cat "$WORK/overlay.cpio" "$IMAGE/root.cpio.zst" >"$WORK/initrd"

ACCEL="$(accel)"
CPU=max
[ "$ACCEL" = kvm ] && CPU=host
echo "boot.sh: booting case $CASE with $ACCEL" >&2
# quiet, loglevel=1: only the suite's lines (and emergencies) reach the console.
timeout "$TIMEOUT" qemu-system-x86_64 -machine "q35,accel=$ACCEL" -cpu "$CPU" -smp 2 -m "$MEMORY" \
  -display none -no-reboot -serial stdio -monitor none -nic none \
  -kernel "$IMAGE/vmlinuz" -initrd "$WORK/initrd" \
  -append "console=ttyS0 rdinit=/lib/systemd/systemd quiet loglevel=1 systemd.show_status=false panic=-1 drover_vm.case=$CASE $*"
