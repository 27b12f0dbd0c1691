#!/bin/bash
# Failover, measured: two droverctld on a PostgreSQL server of their own (SlurmctldTimeout=2),
# 8 clients submitting, the leader killed with -9 ten times (FailoverTest's kill test with more
# rounds: every acknowledged job must be there once), then a leader paused with SIGSTOP past its
# lease three times. Prints each takeover and the median and maximum of each kind:
#   kill -9   the dead leader was a process of this host: the standby takes the lease at once
#   SIGSTOP   the lease has to run out first, as when the leader's host dies
# Usage: bench/failover.sh [BUILD_DIR]   (default build; ctld_failover_test must be built)
set -euo pipefail
build="${1:-build}"
test="$build/bin/ctld_failover_test"
[ -x "$test" ] || { echo "failover.sh: no $test: build first" >&2; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
DROVER_FAILOVER_ROUNDS=10 "$test" --gtest_filter=FailoverTest.EveryAcknowledgedJobSurvivesKillingTheLeader \
  >"$out" 2>&1 || { cat "$out"; echo "failover.sh: the kill test failed" >&2; exit 1; }
grep '^round' "$out"
for i in 1 2 3; do
  "$test" --gtest_filter=FailoverTest.APausedLeaderIsFencedAndStops >"$out.$i" 2>&1 ||
    { cat "$out.$i"; echo "failover.sh: the SIGSTOP test failed" >&2; exit 1; }
  grep '^paused' "$out.$i"
done
summary() {  # label, then the figures in ms
  local label="$1"; shift
  printf '%s\n' "$@" | sort -n | awk -v label="$label" '
    { v[NR] = $1 } END {
      median = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
      printf "%s: %d takeovers, median %d ms, max %d ms\n", label, NR, median, v[NR] }'
}
mapfile -t kills < <(sed -n 's/^round .* took over in \([0-9]*\) ms$/\1/p' "$out")
mapfile -t pauses < <(cat "$out".[123] | sed -n 's/^paused leader: .* took over in \([0-9]*\) ms$/\1/p')
rm -f "$out".[123]
summary "kill -9 of the leader" "${kills[@]}"
summary "leader paused past its 2 s lease" "${pauses[@]}"
