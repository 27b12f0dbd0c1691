#!/bin/bash
# The REST API's call latency at 20,000 pending jobs: a `drover up` cluster of the demo
# configuration (MaxJobCount raised), 20 arrays of 1,000 held tasks, `drover restd` as nobody,
# then each path 11 times with curl (median of time_total). Run as root (restd drops to nobody).
#
#   bench/rest.sh [BIN_DIR]    (default build/bin)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "${1:-$root/build/bin}" && pwd)"
work="$(mktemp -d /tmp/drover_rest_bench_XXXXXX)"
restd=""
cleanup() {
  if [ -n "$restd" ]; then kill "$restd" 2>/dev/null || true; fi
  "$bin/drover" down --state "$work/c" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
cp "$root"/examples/demo/*.conf "$work/"
echo "MaxJobCount=30000" >>"$work/slurm.conf"
"$bin/drover" up --conf "$work/slurm.conf" --state "$work/c" >"$work/up.txt" 2>&1
export DROVER_CONF="$work/c/slurm.conf" PATH="$bin:$PATH"
for _ in $(seq 20); do sbatch -H -o /dev/null --array=0-999 --wrap true >/dev/null; done
echo "pending: $(squeue -h -r -t PD | wc -l)"
token=$(scontrol token username=nobody lifespan=600 | sed 's/^SLURM_JWT=//')
drover restd -u nobody 127.0.0.1:0 >"$work/restd.out" 2>"$work/restd.err" &
restd=$!
for _ in $(seq 100); do grep -q listening "$work/restd.out" && break; sleep 0.1; done
url="http://$(sed -n 's/^drover restd: listening on //p' "$work/restd.out")"
job=$(squeue -h -r -t PD -o %i | sed -n 10500p)
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for path in /slurm/v0.0.38/ping /slurm/v0.0.38/diag "/slurm/v0.0.38/job/$job" \
  /slurm/v0.0.38/node/node1 /slurm/v0.0.38/nodes /slurm/v0.0.38/partitions \
  /slurm/v0.0.38/reservations "/slurmdb/v0.0.38/job/$job" /slurm/v0.0.38/jobs; do
  seconds=$(for _ in $(seq 11); do
    curl -s -o "$work/body" -w '%{time_total}\n' -H "X-SLURM-USER-NAME: nobody" \
      -H "X-SLURM-USER-TOKEN: $token" "$url$path"
  done | median)
  printf '%-34s %s s (%s bytes)\n' "$path" "$seconds" "$(stat -c %s "$work/body")"
done
