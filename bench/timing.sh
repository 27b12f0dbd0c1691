# Timing helpers the bench scripts source: wall-clock stamps, rates and the median of five runs.
now() { date +%s.%N; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.0f", n / (b - a) }'; }
seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
# The median of five runs of a command, in seconds. Stamped with bash's $EPOCHREALTIME, not
# $(now): each `date` is a process of its own, which added ~10 ms to every run measured.
median5() {
  local times=()
  for _ in 1 2 3 4 5; do
    local a b
    a=$EPOCHREALTIME
    "$@" >/dev/null
    b=$EPOCHREALTIME
    times+=("$(seconds "$a" "$b")")
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n 3p
}
# `bench_state NAME`: a new temporary state directory in $state for a `drover up` cluster (its
# XDG_STATE_HOME inside), stopped (drover down, by PID) and removed at exit. Needs $bin.
bench_state() {
  state="$(mktemp -d "/tmp/drover_$1_XXXXXX")"
  export XDG_STATE_HOME="$state/xdg"
  trap '"$bin/drover" down --state "$state/cluster" >/dev/null 2>&1 || true; rm -rf "$state"' EXIT
}
