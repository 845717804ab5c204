#!/bin/sh
# The VM suite, run inside the guest by drover-vm-suite.service: what an
# operator does on a pure cgroup v2 host booted by systemd, each step checked.
# Prints "VM ok <step>" or "VM not-ok <step>: <why>" per step, then
# "VM done", to the serial console the host reads, and powers off.
#
# The kernel command line picks the case: drover_vm.case=main (install, limits,
# OOM, device program, agent restarts, uninstall) or no-sock-diag (booted
# with inet_diag and tcp_diag blacklisted).
set -u
cd /drover-vm
export PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
API=http://127.0.0.1:4646
# Seconds: the agent starts in ~6 s under TCG; a job's allocs run within a few more.
START_WAIT=180
JOB_WAIT=180

say() { echo "VM $*"; }
# check NAME COMMAND...: one step, its last output lines as the reason when it fails.
# A NAME holds no ": " (the host reads what follows it as the reason).
check() {
  name="$1"
  shift
  if out="$("$@" 2>&1)"; then say "ok $name"; else say "not-ok $name: $(printf '%s' "$out" | tail -n 10 | tr '\n' ' ')"; fi
}
# until SECONDS COMMAND...: true once the command succeeds, false when the time is up.
until_ok() {
  limit="$1"
  shift
  start="$(date +%s)"
  while ! "$@" >/dev/null 2>&1; do
    [ $(($(date +%s) - start)) -lt "$limit" ] || { echo "still failing after ${limit}s: $*"; "$@" 2>&1 | tail -n 8; return 1; }
    sleep 1
  done
}
finish() {
  say done
  sync
  systemctl poweroff -f
}
trap finish EXIT

scope() { ls -d /sys/fs/cgroup/drover.slice/*."$1".scope 2>/dev/null | head -n 1; }
alloc_of() { basename "$(scope "$1")" | cut -d. -f1; }
healthy() { curl -fsS "$API/v1/agent/health" >/dev/null; }
task_running() { d="$(scope "$1")"; [ -n "$d" ] && [ -n "$(cat "$d/cgroup.procs" 2>/dev/null)" ]; }
no_dir() { [ ! -d "$1" ]; }
# On failure, what the API says of the hungry task instead.
oom_reported() {
  allocs="$(curl -fsS "$API/v1/job/limits/allocations")"
  printf '%s' "$allocs" | grep -q '"oom_killed":"true"' && return 0
  printf '%s' "$allocs" | grep -o '"eat":{.*' | cut -c1-600
  drover job status limits 2>&1 | tail -n 6
  cat /sys/fs/cgroup/drover.slice/*.eat.scope/memory.events 2>&1 | tr '\n' ' '
  journalctl -o cat 2>&1 | grep -i -E "eat|oom" | tail -n 6
  return 1
}
called_and_refused() { id="$(alloc_of curl)"; [ -n "$id" ] && drover alloc logs "$id" curl | grep -q 'api answered 403'; }
same_pid() { [ -d "/proc/$1" ] && grep -qx "$1" "$2/cgroup.procs"; }
running_with_stats() { curl -fsS "$API/v1/client/allocation/$1/stats" | grep -q '"ResourceUsage"'; }

install_and_start() {
  check "cgroup v2 alone at /sys/fs/cgroup" test "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs
  # README, "Install on a host": from a local build's directory.
  check "install.sh --systemd" sh -c 'DROVER_DOWNLOAD_URL=dist sh install.sh --systemd'
  check "systemctl enable --now drover" sh -c 'systemctl daemon-reload && systemctl enable --now drover'
  check "the unit delegates its cgroup" test "$(systemctl show -p Delegate --value drover)" = yes
  check "the agent answers the operator's CLI" until_ok "$START_WAIT" drover node status
}

uninstall() {
  check "install.sh --uninstall --purge" sh install.sh --uninstall --purge
  check "nothing left (binary, unit, config, data, cgroups, processes)" sh -c '
    for path in /usr/local/bin/drover /etc/systemd/system/drover.service /etc/drover.d /var/lib/drover /sys/fs/cgroup/drover.slice; do
      [ ! -e "$path" ] || { echo "left: $path"; exit 1; }
    done
    ! pgrep -a -x drover || { echo "drover processes left"; exit 1; }
    ! pgrep -a -f "^(/bin/)?sleep 3600" || { echo "task processes left"; exit 1; }
    ! systemctl cat drover >/dev/null 2>&1 || { echo "unit still known"; exit 1; }'
}

main_case() {
  install_and_start
  check "sock_diag answers (inet_diag loaded on demand)" sh -c '! journalctl -u drover -o cat | grep -q inet_diag'
  check "job run" drover job run -detach limits.hcl
  check "the exec task runs in drover.slice" until_ok "$JOB_WAIT" task_running sleeper
  sleeper="$(scope sleeper)"
  alloc="$(alloc_of sleeper)"
  check "memory.max is the task's memory" test "$(cat "$sleeper/memory.max")" = 67108864
  check "pids.max is the task's pids_limit" test "$(cat "$sleeper/pids.max")" = 64
  check "cpu.weight is set from the task's cpu" sh -c "test \"\$(cat $sleeper/cpu.weight)\" != 100"
  check "swap is not added to the limit" test "$(cat "$sleeper/memory.swap.max" 2>/dev/null || echo 0)" = 0
  check "the OOM kill is reported" until_ok "$JOB_WAIT" oom_reported
  check "stats are read from v2 files" running_with_stats "$alloc"

  # The device program: the task's cgroup refuses a disk node made outside it, and lets /dev/null through.
  mknod /root/sda b 8 0
  check "a device program is attached to the task's cgroup" sh -c "bpftool cgroup show $sleeper | grep -q device"
  check "in the task's cgroup a disk node is refused" sh -c "sh -c 'echo \$\$ > $sleeper/cgroup.procs; head -c 1 /root/sda' 2>&1 | grep -q 'Operation not permitted'"
  check "in the task's cgroup /dev/null, zero and urandom open" sh -c "echo \$\$ > $sleeper/cgroup.procs; echo x > /dev/null && head -c 1 /dev/zero >/dev/null && head -c 1 /dev/urandom >/dev/null"

  pid="$(head -n 1 "$sleeper/cgroup.procs")"
  check "systemctl restart drover" systemctl restart drover
  check "the agent is back after the restart" until_ok "$START_WAIT" healthy
  check "the task kept running through the restart" same_pid "$pid" "$sleeper"
  check "the new agent reattached (stats through the executor)" until_ok "$JOB_WAIT" running_with_stats "$alloc"
  check "systemctl stop drover" systemctl stop drover
  check "the task runs while the agent is stopped" same_pid "$pid" "$sleeper"
  check "systemctl start drover" systemctl start drover
  check "the agent is back after the stop" until_ok "$START_WAIT" healthy
  check "the task is the same after stop and start" same_pid "$pid" "$sleeper"
  check "the reattached agent stops the job" drover job stop limits
  check "the task's cgroup is gone after the stop" until_ok "$JOB_WAIT" no_dir "$sleeper"

  # Uninstall with a task running, as a host being retired has.
  check "job run before uninstall" drover job run -detach limits.hcl
  check "a task runs before uninstall" until_ok "$JOB_WAIT" task_running sleeper
  uninstall
}

no_sock_diag_case() {
  check "inet_diag is not loaded" sh -c '! grep -q "^inet_diag " /proc/modules'
  install_and_start
  check "the agent names the missing modules in its log" sh -c 'journalctl -u drover -o cat | grep -q "modprobe -a inet_diag tcp_diag"'
  check "job run" drover job run -detach caller.hcl
  check "a task calling the API over TCP is still refused" until_ok "$JOB_WAIT" called_and_refused
  check "the operator is still served" drover node status
  uninstall
}

case "$(sed -n 's/.*drover_vm.case=\([a-z-]*\).*/\1/p' /proc/cmdline)" in
  main) main_case ;;
  no-sock-diag) no_sock_diag_case ;;
  *) say "not-ok case: no drover_vm.case on the kernel command line" ;;
esac
