#!/bin/bash
# drover up / status / env / down on the demo configuration: a real controller and four
# emulated agents on loopback, in a temporary state directory; every process is stopped.
set -euo pipefail
drover="$1"
state="$(mktemp -d /tmp/drover_up_XXXXXX)"
export XDG_STATE_HOME="$state/xdg"
cleanup() {
  "$drover" down --state "$state/cluster" >/dev/null 2>&1 || true
  rm -rf "$state"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; for log in "$state"/cluster/logs/*.log; do echo "--- $log"; tail -5 "$log"; done; exit 1; }

"$drover" up --state "$state/cluster" > "$state/up.txt" || fail "drover up failed: $(cat "$state/up.txt")"
grep -q "every node IDLE" "$state/up.txt" || fail "drover up did not say the nodes are IDLE"
grep -q "^export DROVER_CONF=$state/cluster/slurm.conf$" "$state/up.txt" || fail "no DROVER_CONF line"
grep -q "SlurmctldHost=localhost(127.0.0.1)" "$state/cluster/slurm.conf" || fail "controller not on loopback"

"$drover" up --state "$state/cluster" > /dev/null 2> "$state/again.txt" && fail "a second drover up succeeded"
grep -q "already running" "$state/again.txt" || fail "a second drover up did not say why: $(cat "$state/again.txt")"

"$drover" status --state "$state/cluster" > "$state/status.txt" || fail "drover status failed"
[ "$(grep -c ' yes  *IDLE' "$state/status.txt")" = 4 ] || fail "status: $(cat "$state/status.txt")"
"$drover" env --state "$state/cluster" | grep -q "^export PATH=" || fail "drover env printed no PATH"

# sbatch: --test-only answers without queuing or using a job ID; a script gets its arguments.
export DROVER_CONF="$state/cluster/slurm.conf"
printf '#!/bin/bash\necho "$1 $2"\n' > "$state/args.sh"
"$drover" sbatch --test-only "$state/args.sh" 2> "$state/test_only.txt" || fail "sbatch --test-only: $(cat "$state/test_only.txt")"
grep -Eq '^sbatch: Job [0-9]+ to start at [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8} using [0-9]+ processors on nodes [^ ]+ in partition [^ ]+$' "$state/test_only.txt" ||
  fail "sbatch --test-only said: $(cat "$state/test_only.txt")"
would_be=$(sed -E 's/^sbatch: Job ([0-9]+) .*/\1/' "$state/test_only.txt")
job=$("$drover" sbatch --parsable --wait -o "$state/args.out" "$state/args.sh" "hello there" second) || fail "the arguments job failed"
[ "$job" = "$would_be" ] || fail "--test-only used a job ID: it said $would_be, the next job is $job"
[ "$(cat "$state/args.out")" = "hello there second" ] || fail "the script's arguments: $(cat "$state/args.out")"
"$drover" sbatch --wrap=true extra > /dev/null 2> "$state/wrap.txt" && fail "--wrap with arguments was accepted"
grep -qx "sbatch: error: Script arguments not permitted with --wrap option" "$state/wrap.txt" || fail "--wrap with arguments: $(cat "$state/wrap.txt")"

pids=$(for f in "$state"/cluster/pids/*; do sed -n 's/^pid=//p' "$f"; done)
[ "$(echo "$pids" | wc -w)" = 5 ] || fail "expected 5 recorded PIDs, got: $pids"

# A job still running at `drover down` is cancelled and its supervisor stopped; the agent of its
# node, stopped after it, removes the node's cgroup level (drover/NODE-HASH) it no longer needs.
marker="$state/sleeper"
cp "$(command -v sleep)" "$marker"
running=$("$drover" sbatch --parsable -o /dev/null --wrap="$marker 300")
sleeper=""
for _ in $(seq 200); do
  sleeper=$(pgrep -f "^$marker" || true)
  [ -n "$sleeper" ] && break
  sleep 0.05
done
[ -n "$sleeper" ] || fail "job $running did not start its sleep"
pids="$pids $sleeper $(cat "$state"/cluster/spool/*/job_"$running"/supervisor.pid 2>/dev/null | sed -n 's/^pid=//p')"
level=$(sed -nE 's|^[0-9]+:[^:]*:/drover/([^/]+)/job_[0-9]+.*|\1|p' "/proc/$sleeper/cgroup" | head -n1)
levels() { find /sys/fs/cgroup -mindepth 2 -maxdepth 3 -type d -path "*/drover/$level" 2>/dev/null; }
if [ -n "$level" ]; then
  [ -n "$(levels)" ] || fail "the job runs in drover/$level, which is not under /sys/fs/cgroup"
else
  echo "note: the job runs in no drover cgroup here ($(tr '\n' ' ' < "/proc/$sleeper/cgroup")); its level is not checked"
fi
"$drover" down --state "$state/cluster" > /dev/null || fail "drover down failed"
for pid in $pids; do
  # A zombie waiting for its new parent (init) to reap it has stopped.
  state_letter=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || true)
  if [ -n "$state_letter" ] && [ "$state_letter" != Z ]; then fail "PID $pid survived drover down"; fi
done
"$drover" status --state "$state/cluster" > /dev/null 2>&1 && fail "status after down succeeded"
if [ -n "$level" ] && [ -n "$(levels)" ]; then fail "drover down left the node's cgroup level: $(levels)"; fi
echo "PASS"
