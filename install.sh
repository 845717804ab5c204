#!/bin/sh
# Installs drover on a Linux host. Run with --help for the options.
#
# The binary is verified against SHA256SUMS before anything is installed; on a
# mismatch nothing is written.
set -eu

usage() {
  cat <<'USAGE'
Installs drover on a Linux host.

  curl -fsSL https://github.com/drover-dev/drover/releases/latest/download/install.sh | sh
  curl -fsSL .../install.sh | sh -s -- --prefix /opt/drover --systemd
  DROVER_DOWNLOAD_URL=./dist sh install.sh      # from a local build
  sh install.sh --uninstall [--purge]           # remove it again

Options:
  --prefix DIR   install to DIR/bin/drover (default /usr/local)
  --systemd      also write a systemd unit (and /etc/drover.d/agent.hcl if absent)
  --uninstall    stop the agent and its tasks, remove the unit, the binary and
                 drover's cgroups
  --purge        with --uninstall: also remove the config dir and the data dir
                 (/var/lib/drover, the starter config's)
  -h, --help     print this

Environment:
  DROVER_DOWNLOAD_URL  where drover-linux-<arch> and SHA256SUMS come from: a URL,
                       or a plain directory (such as a local dist/)
  DROVER_SYSTEMD_DIR   where the unit goes (default /etc/systemd/system)
  DROVER_CONFIG_DIR    where the agent config goes (default /etc/drover.d)
  DROVER_DATA_DIR      the data dir --purge removes (default /var/lib/drover)
  DROVER_CGROUP_PARENT the client's cgroup_parent, whose cgroups --uninstall
                       removes (default drover)

The binary is verified against SHA256SUMS before anything is installed; on a
mismatch nothing is written.
USAGE
}

DOWNLOAD_URL="${DROVER_DOWNLOAD_URL:-https://github.com/drover-dev/drover/releases/latest/download}"
SYSTEMD_DIR="${DROVER_SYSTEMD_DIR:-/etc/systemd/system}"
CONFIG_DIR="${DROVER_CONFIG_DIR:-/etc/drover.d}"
PREFIX=/usr/local
SYSTEMD=0
UNINSTALL=0
PURGE=0
# The starter config's data_dir, and the cgroup_parent drover uses unless configured otherwise.
DATA_DIR="${DROVER_DATA_DIR:-/var/lib/drover}"
CGROUP_PARENT="${DROVER_CGROUP_PARENT:-drover}"

fail() {
  echo "drover install: $*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix)
      [ $# -ge 2 ] || fail "--prefix needs a directory"
      PREFIX="$2"
      shift 2
      ;;
    --prefix=*)
      PREFIX="${1#--prefix=}"
      shift
      ;;
    --systemd)
      SYSTEMD=1
      shift
      ;;
    --uninstall)
      UNINSTALL=1
      shift
      ;;
    --purge)
      PURGE=1
      shift
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    *) fail "unknown option $1 (try --help)" ;;
  esac
done

[ "$PURGE" = 0 ] || [ "$UNINSTALL" = 1 ] || fail "--purge goes with --uninstall"

# Kills every process in a cgroup directory and below, then removes the directories, deepest first.
remove_cgroup() {
  [ -d "$1" ] || return 0
  if [ -e "$1/cgroup.kill" ]; then
    echo 1 >"$1/cgroup.kill"
  else
    find "$1" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -9 2>/dev/null || true
  fi
  find "$1" -depth -type d -exec rmdir {} + 2>/dev/null || true
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    [ -d "$1" ] || return 0
    sleep 0.5
    find "$1" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  echo "drover install: could not remove $1 (processes left in it?)" >&2
}

uninstall() {
  if [ -f "${SYSTEMD_DIR}/drover.service" ]; then
    # KillMode=process leaves tasks and their executors behind on a plain stop: kill the whole unit.
    systemctl disable --now drover.service >/dev/null 2>&1 || true
    systemctl kill --signal=SIGKILL drover.service >/dev/null 2>&1 || true
    rm -f "${SYSTEMD_DIR}/drover.service"
    systemctl daemon-reload >/dev/null 2>&1 || true
    systemctl reset-failed drover.service >/dev/null 2>&1 || true
  fi
  # The tasks' cgroups: the v2 slice, or one directory per v1 hierarchy.
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    remove_cgroup "/sys/fs/cgroup/${CGROUP_PARENT}.slice"
  else
    for hierarchy in /sys/fs/cgroup/*/; do remove_cgroup "${hierarchy}${CGROUP_PARENT}"; done
  fi
  rm -f "${PREFIX}/bin/drover"
  if [ "$PURGE" = 1 ]; then
    # Mounts a task left under its alloc dir (secrets, binds) go before the files.
    awk -v dir="$DATA_DIR/" 'index($2, dir) == 1 { print $2 }' /proc/mounts | sort -r | while read -r point; do umount -l "$point" || true; done
    rm -rf "$DATA_DIR" "$CONFIG_DIR"
  fi
  echo "drover install: removed drover$([ "$PURGE" = 1 ] && echo ", its config and its data" || true)"
}

if [ "$UNINSTALL" = 1 ]; then
  uninstall
  exit 0
fi

[ "$(uname -s)" = "Linux" ] || fail "drover runs on Linux only (this is $(uname -s))"
case "$(uname -m)" in
  x86_64 | amd64) ARCH=x64 ;;
  aarch64 | arm64) ARCH=arm64 ;;
  *) fail "no drover build for $(uname -m) (builds exist for x86_64 and aarch64)" ;;
esac
ASSET="drover-linux-${ARCH}"

case "$DOWNLOAD_URL" in
  *://*)
    if command -v curl >/dev/null 2>&1; then
      fetch() { curl -fsSL --retry 3 -o "$2" "$1"; }
    elif command -v wget >/dev/null 2>&1; then
      fetch() { wget -q -O "$2" "$1"; }
    else
      fail "curl or wget is required"
    fi
    ;;
  *)
    # A plain directory (a local dist/, a mounted share): copied, not downloaded.
    [ -d "$DOWNLOAD_URL" ] || fail "DROVER_DOWNLOAD_URL=${DOWNLOAD_URL} is neither a URL nor a directory"
    fetch() { cp "$1" "$2"; }
    ;;
esac

if command -v sha256sum >/dev/null 2>&1; then
  sha256() { sha256sum "$1" | cut -d' ' -f1; }
elif command -v shasum >/dev/null 2>&1; then
  sha256() { shasum -a 256 "$1" | cut -d' ' -f1; }
else
  fail "sha256sum or shasum is required to verify the download"
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT INT TERM

echo "drover install: downloading ${ASSET} from ${DOWNLOAD_URL}"
fetch "${DOWNLOAD_URL}/SHA256SUMS" "$WORK/SHA256SUMS" || fail "cannot download ${DOWNLOAD_URL}/SHA256SUMS"
fetch "${DOWNLOAD_URL}/${ASSET}" "$WORK/drover" || fail "cannot download ${DOWNLOAD_URL}/${ASSET}"

EXPECTED="$(awk -v name="$ASSET" '$2 == name || $2 == "*" name { print $1; exit }' "$WORK/SHA256SUMS")"
[ -n "$EXPECTED" ] || fail "SHA256SUMS has no entry for ${ASSET}; refusing to install"
ACTUAL="$(sha256 "$WORK/drover")"
[ "$EXPECTED" = "$ACTUAL" ] || fail "checksum mismatch for ${ASSET}: expected ${EXPECTED}, got ${ACTUAL}; refusing to install"

BIN_DIR="${PREFIX}/bin"
mkdir -p "$BIN_DIR"
# Copy beside the target, then rename: a running drover keeps its old inode and
# the path never holds a half-written file.
cp "$WORK/drover" "${BIN_DIR}/.drover.new.$$"
chmod 0755 "${BIN_DIR}/.drover.new.$$"
mv -f "${BIN_DIR}/.drover.new.$$" "${BIN_DIR}/drover"
echo "drover install: installed $("${BIN_DIR}/drover" version) to ${BIN_DIR}/drover"

if [ "$SYSTEMD" = 1 ]; then
  mkdir -p "$SYSTEMD_DIR" "$CONFIG_DIR"
  if [ ! -e "${CONFIG_DIR}/agent.hcl" ]; then
    cat >"${CONFIG_DIR}/agent.hcl" <<HCL
data_dir  = "/var/lib/drover"
bind_addr = "127.0.0.1"

client {
  enabled = true
}
HCL
  fi
  # KillMode=process: stopping or restarting the agent must not kill its tasks;
  # their executors reattach when it comes back. Delegate=yes: the agent manages
  # cgroups (its tasks' slice, controllers enabled below it) and systemd leaves
  # the unit's own subtree to it rather than reshaping it on a reload.
  cat >"${SYSTEMD_DIR}/drover.service" <<UNIT
[Unit]
Description=drover node agent
Documentation=https://github.com/drover-dev/drover
Wants=network-online.target
After=network-online.target

[Service]
ExecStart=${BIN_DIR}/drover agent -config ${CONFIG_DIR}
ExecReload=/bin/kill -HUP \$MAINPID
KillMode=process
Delegate=yes
KillSignal=SIGINT
Restart=on-failure
RestartSec=2
LimitNOFILE=65536
TasksMax=infinity
OOMScoreAdjust=-1000

[Install]
WantedBy=multi-user.target
UNIT
  echo "drover install: wrote ${SYSTEMD_DIR}/drover.service (config in ${CONFIG_DIR})"
  echo "drover install: start it with: systemctl daemon-reload && systemctl enable --now drover"
fi
