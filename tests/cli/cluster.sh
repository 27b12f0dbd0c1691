# Sourced by the cluster tests: `start_cluster NAME [--conf slurm.conf]` starts a local emulated
# cluster (drover up: a controller and four agents on loopback; the demo configuration unless
# --conf names another) in a new temporary state directory (under $DROVER_TEST_ROOT, else
# /tmp), points the commands at it (DROVER_CONF, PATH with the symlinks beside $drover) and
# stops every process it started at exit (drover down, by PID). `fail MESSAGE` prints the daemons' last log lines
# (and runs `on_fail` when the test defines one) and exits 1.
# Needs: $drover, the drover binary.
fail() {
  echo "FAIL: $*" >&2
  if declare -F on_fail >/dev/null; then on_fail; fi
  for log in "$state"/cluster/logs/*.log; do echo "--- $log"; tail -5 "$log"; done
  exit 1
}

# `skip_unless_root WHY`: a test that needs root says why and stops, passing as skipped.
skip_unless_root() {
  if [ "$(id -u)" != 0 ]; then
    echo "SKIP: needs root $1"
    exit 0
  fi
}

# `poll TRIES COMMAND...`: COMMAND again every 0.1 s until it succeeds, at most TRIES times; its
# last status.
poll() {
  local tries=$1
  shift
  for ((i = 1; i < tries; i++)); do
    "$@" && return 0
    sleep 0.1
  done
  "$@"
}

cleanup_cluster() {
  "$drover" down --state "$state/cluster" >/dev/null 2>&1 || true
  rm -rf "$state"
}

start_cluster() {
  # Absolute: the tests cd into their work folder, and `drover down` must still be found.
  drover="$(cd "$(dirname "$drover")" && pwd)/$(basename "$drover")"
  state="$(mktemp -d "${DROVER_TEST_ROOT:-/tmp}/drover_$1_XXXXXX")"
  export XDG_STATE_HOME="$state/xdg"
  trap cleanup_cluster EXIT
  "$drover" up --state "$state/cluster" "${@:2}" > "$state/up.txt" 2>&1 ||
    fail "drover up: $(cat "$state/up.txt")"
  export DROVER_CONF="$state/cluster/slurm.conf"
  export PATH="$(cd "$(dirname "$drover")" && pwd):$PATH"
  unset SLURM_JOB_ID SLURM_JOBID SLURM_NTASKS SLURM_NTASKS_PER_NODE SLURM_CPUS_PER_TASK
  mkdir -p "$state/work"
}
