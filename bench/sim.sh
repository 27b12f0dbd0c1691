#!/bin/bash
# drover sim's benchmarks: the example traces replayed with EASY backfill, and a generated
# 10,000-node x 8-GPU cluster with 200,000 jobs. One line a replay: jobs, wall seconds,
# simulated seconds per wall second, scheduler cycles and their mean and longest, and the
# quality figures (utilization, mean wait, bounded slowdown).
#
#   bench/sim.sh [BIN_DIR] [--quick]   (default build/bin; --quick: 20,000 generated jobs)
#
# Goals: KTH-SP2 in under 10 s of wall time; the 10,000-node replay at >= 1,000x real time.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "${1:-$root/build/bin}" && pwd)"
generated=200000
[ "${2:-}" = --quick ] && generated=20000
traces="$root/bench/traces"
out="$(mktemp -d /tmp/drover_sim_bench_XXXXXX)"
trap 'rm -rf "$out"' EXIT

value() { grep -m1 "^  \"$1\": " "$2" | sed -E 's/^  "[^"]+": //; s/,$//'; }
nested() { grep -m1 -A3 "^  \"$1\": " "$2" | grep -m1 "\"$3\"" | sed -E 's/.*: //; s/,$//'; }
replay() {
  local name="$1"
  shift
  local f="$out/${name//\//_}.json"
  "$bin/drover" sim "$@" --json > "$f"
  printf '%-28s jobs %7s  wall %8s s  %10s sim s/wall s  cycles %7s  mean %7s ms  max %8s ms  util cores %6s gpus %6s  wait %9s s  slowdown %s\n' \
    "$name" "$(value jobs "$f")" "$(value wall_s "$f")" "$(value sim_seconds_per_wall_second "$f")" \
    "$(value cycles "$f")" "$(value mean_cycle_ms "$f")" "$(value max_cycle_ms "$f")" \
    "$(nested utilization "$f" cores)" "$(nested utilization "$f" gpus)" \
    "$(value mean_wait_s "$f")" "$(value mean_bounded_slowdown "$f")"
}

echo "$(nproc) CPUs; $bin/drover"
replay KTH-SP2 --trace "$traces/KTH-SP2-1996-2.1-cln.swf.gz" --nodes 100 --cores-per-node 1
replay Lublin-256 --trace "$traces/lublin_256.swf" --nodes 256 --cores-per-node 1
replay Alibaba-openb --trace "$traces/openb_pod_list_default.csv"
replay "generated-10000x8/$generated" --synthetic "$generated" --nodes 10000 --cores-per-node 64 \
  --gpus-per-node 8 --leaf 32
