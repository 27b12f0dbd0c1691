#!/bin/bash
# The Grafana dashboard (contrib/grafana/drover.json) against a real Prometheus (Debian's) that
# scrapes a running `drover up` cluster: every query of every panel, its Grafana variables
# filled in as Grafana fills them, is evaluated through Prometheus's HTTP API and must return
# data (no panel that can only ever be empty). The cluster is given what the panels show: jobs
# running on GPUs under an account sacctmgr knows, jobs pending, a drained node, starts and
# ends during the scrape window. Prometheus also loads the alert rules (contrib/prometheus).
# The agents' /metrics are scraped too (job drover_agents): their GPUs are the fake NVML
# library's (FAKE_NVML_LIBRARY, the third argument), with utilization, power and an XID.
set -euo pipefail
drover="$1"
root_dir="$2"
fake_nvml="$3"
source "$(dirname "$0")/cluster.sh"
command -v prometheus >/dev/null || { echo "FAIL: prometheus is not installed (scripts/setup)"; exit 1; }
prom_pid=""
on_exit() {
  [ -n "$prom_pid" ] && kill "$prom_pid" 2>/dev/null && wait "$prom_pid" 2>/dev/null
  cleanup_cluster
}
conf="$(mktemp -d /tmp/drover_grafana_conf_XXXXXX)"
cp "$root_dir/examples/demo/slurm.conf" "$root_dir/examples/demo/gres.conf" "$root_dir/examples/demo/topology.conf" "$conf/"
echo "HealthCheckInterval=1" >>"$conf/slurm.conf"  # the GPU health probes, which count XIDs
for n in 1 2 3 4; do
  echo "node node$n"
  for g in 0 1 2 3 4 5 6 7; do
    xid=""
    [ "$n$g" = 10 ] && xid="xid=13"  # an application's XID: counted, no drain
    echo "gpu name=\"NVIDIA A100-SXM4-80GB\" uuid=GPU-node$n-$g minor=$g bus=0x$((16 + g)) cpus=0-1 util=$((10 * g + n)) used=$((1024 * g)) power=$((100 + g)) temp=$((40 + g)) $xid"
  done
done >"$conf/nvml.conf"
export FAKE_NVML_CONFIG="$conf/nvml.conf"
start_cluster grafana --conf "$conf/slurm.conf" --nvml "$fake_nvml"
trap 'on_exit; rm -rf "$conf"' EXIT
cd "$state/work"
http_port=$(cat "$state/cluster/http.port")
agent_targets=""
for file in "$state"/cluster/metrics/*.port; do
  agent_targets+="${agent_targets:+, }'127.0.0.1:$(cat "$file")'"
done
[ -n "$agent_targets" ] || fail "drover up wrote no agent /metrics port"

# What the panels show.
sacctmgr -i add account ml >/dev/null || fail "sacctmgr add account"
sacctmgr -i add user "$(id -un)" account=ml >/dev/null || fail "sacctmgr add user"
for _ in 1 2; do sbatch -A ml -N1 --gres=gpu:8 -o /dev/null --wrap 'sleep 600' >/dev/null; done
sbatch -N4 --gres=gpu:8 -o /dev/null --wrap 'sleep 600' >/dev/null  # pending: Resources
node=$(sinfo -h -N -o %N | tail -1)
scontrol update nodename="$node" state=drain reason="fan failed" || fail "drain"

# Prometheus, its own port and directory, scraping every second.
prom_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$state/prometheus"
cp "$root_dir/contrib/prometheus/alerts.yml" "$state/prometheus/"
cat >"$state/prometheus/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - alerts.yml
scrape_configs:
  - job_name: drover
    static_configs:
      - targets: ['127.0.0.1:$http_port']
  - job_name: drover_agents
    static_configs:
      - targets: [$agent_targets]
YAML
prometheus --config.file="$state/prometheus/prometheus.yml" --storage.tsdb.path="$state/prometheus/data" \
  --web.listen-address="127.0.0.1:$prom_port" >"$state/prometheus/log.txt" 2>&1 &
prom_pid=$!
poll 300 curl -sf "http://127.0.0.1:$prom_port/-/ready" >/dev/null ||
  fail "prometheus did not start: $(tail -5 "$state/prometheus/log.txt")"

# Starts, ends and submissions while Prometheus scrapes: the rates and waits have data.
for round in $(seq 8); do
  sbatch -A ml -o /dev/null --wrap 'true' >/dev/null
  sleep 2
done
curl -sf "http://127.0.0.1:$prom_port/api/v1/rules" | grep -q DroverQueueStuck ||
  fail "prometheus did not load the alert rules"

python3 - "$root_dir/contrib/grafana/drover.json" "http://127.0.0.1:$prom_port" "$(id -u)" <<'PY' || fail "a panel has no data"
import json, math, sys, urllib.parse, urllib.request
dashboard = json.load(open(sys.argv[1]))
base = sys.argv[2]
root = sys.argv[3] == "0"
# Grafana's variables as Grafana fills them: "All" of $job is its values (the drover job), a
# rate window of several scrapes.
values = {"$job": "drover", "${job}": "drover", "$agent_job": "drover_agents",
          "$__rate_interval": "15s", "$__interval": "1s", "$__range": "1m"}
failed = 0
count = 0
for panel in dashboard["panels"]:
    for target in panel.get("targets", []):
        expr = target["expr"]
        if not root and "drover_job_" in expr:
            print(f"skipped (not root: the jobs have no cgroups): {panel['title']}")
            continue
        for name, value in sorted(values.items(), key=lambda kv: -len(kv[0])):
            expr = expr.replace(name, value)
        url = base + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        reply = json.load(urllib.request.urlopen(url))
        results = reply["data"]["result"] if reply.get("status") == "success" else []
        good = [r for r in results if not math.isnan(float(r["value"][1]))]
        count += 1
        if not good:
            failed += 1
            print(f"FAIL: panel '{panel['title']}': {expr} -> {reply}", file=sys.stderr)
        else:
            print(f"ok: {panel['title']} [{target['refId']}]: {len(good)} series")
print(f"{count} queries of {len(dashboard['panels'])} panels")
sys.exit(1 if failed or count == 0 else 0)
PY
# The accounts label comes from accounting: ml is there, a job's own account name is not.
curl -sf "http://127.0.0.1:$prom_port/api/v1/query?query=drover_gpus_allocated_by_account" |
  grep -q '"account":"ml"' || fail "no GPUs under account ml"
echo "PASS"
