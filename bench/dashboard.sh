#!/bin/bash
# The web dashboard's first paint at scale, in a real headless Chromium (tests/cli/dashboard_test.py
# --paint): a live cluster of NODES emulated nodes (32 a leaf switch) with PENDING held jobs (as
# arrays of 1,000) and RUNNING jobs. Prints the time from navigation to the first page drawn with
# its data (the queue, then the nodes' heat map), as the page itself measures it
# (performance.now() when the first answer is drawn), and the overview call's time with curl.
#
#   bench/dashboard.sh [BIN_DIR]           (default: build/bin)
#   NODES=10000 PENDING=100000 RUNNING=500 bench/dashboard.sh
#   KEEP=1 bench/dashboard.sh      leaves the cluster up (drover down --state ... stops it)
# Goals (issue 21): first paint under 1 s at 10,000 nodes and 100,000 jobs; a /metrics scrape
# under 100 ms at 10,000 nodes.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "${1:-$root/build/bin}" && pwd)"
nodes=${NODES:-10000}
pending_jobs=${PENDING:-100000}
running_jobs=${RUNNING:-500}
# shellcheck source=bench/timing.sh
source "$root/bench/timing.sh"
bench_state dashboard
cd "$state"
scale_conf "$state/conf" dashboard "$nodes" $((pending_jobs + running_jobs + 10000))

"$bin/drover" up --conf "$state/conf/slurm.conf" --state "$state/cluster" >"$state/up.txt"
export DROVER_CONF="$state/cluster/slurm.conf" PATH="$bin:$PATH"
for ((i = 0; i < running_jobs; i++)); do sbatch -Q -G 2 --wrap 'sleep 3600'; done
for ((k = 0; k < pending_jobs / 1000; k++)); do sbatch -Q -H --array=0-999 --wrap true; done
for _ in $(seq 600); do
  [ "$(squeue -h -t R -o %i | wc -l)" -ge "$running_jobs" ] && break
  sleep 0.5
done
echo "nodes $nodes, jobs $(squeue -h -r -o %i | wc -l) ($(squeue -h -t R -o %i | wc -l) running)"
url="http://127.0.0.1:$(cat "$state/cluster/http.port")"
export ADMIN_TOKEN
ADMIN_TOKEN=$(scontrol token lifespan=900 | sed -n 's/^SLURM_JWT=//p')
overview() { curl -s -o /dev/null -H "X-SLURM-USER-TOKEN: $ADMIN_TOKEN" "$url/ui/api/overview"; }
jobs_page() { curl -s -o /dev/null -H "X-SLURM-USER-TOKEN: $ADMIN_TOKEN" "$url/ui/api/jobs?limit=500"; }
echo "GET /ui/api/overview (median of 5)      $(median5 overview) s"
# Prometheus' scrapes at this size: the controller's /metrics, and one agent process's (the
# agents of drover up serve 1,000 emulated nodes each).
controller_metrics() { curl -s -o /dev/null "$url/metrics"; }
agent_port=$(cat "$(ls "$state"/cluster/metrics/*.port | head -1)")
agent_metrics() { curl -s -o /dev/null "http://127.0.0.1:$agent_port/metrics"; }
echo "GET /metrics, controller (median of 5)  $(median5 controller_metrics) s ($(curl -s "$url/metrics" | wc -c) bytes)"
echo "GET /metrics, one agent of $(curl -s "http://127.0.0.1:$agent_port/metrics" | grep -c '^drover_node_cpus{') nodes (median of 5) $(median5 agent_metrics) s"
echo "GET /ui/api/jobs?limit=500 (median of 5) $(median5 jobs_page) s"
for run in 1 2 3; do
  /usr/bin/python3 "$root/tests/cli/dashboard_test.py" "$url" "$state/shots" --paint | sed "s/^/run $run: /"
done
if [ -n "${KEEP:-}" ]; then
  trap - EXIT
  echo "KEEP: the cluster stays up: export DROVER_CONF=$DROVER_CONF; $url"
else
  "$bin/drover" down --state "$state/cluster" >/dev/null
fi
