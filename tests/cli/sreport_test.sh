#!/bin/bash
# sreport against a real cluster (`drover up` on the demo configuration, loopback, a temporary
# state directory, `drover down` stops what it started): two jobs of known size run, then each
# report is read back: Slurm 22.05's title block and columns, -P, -t percent, and the errors
# for an unknown report and condition. (A window ends on a whole hour no later than now, as
# Slurm's: these jobs' usage is counted by the formats' unit tests, cli.Sreport*.)
# Usage: sreport_test.sh DROVER
set -euo pipefail
drover="$1"
source "$(dirname "$0")/cluster.sh"
start_cluster sreport
trap cleanup_cluster EXIT
cd "$state/work"
dashes="--------------------------------------------------------------------------------"

# Two jobs: 2 CPUs for 3 s, and 1 GPU for 3 s.
a=$(sbatch --parsable -n 2 --wrap="sleep 3")
b=$(sbatch --parsable --gpus=1 --wrap="sleep 3")
for _ in $(seq 1 150); do
  [ -z "$(squeue -h -j "$a,$b" -o %i)" ] && break
  sleep 0.2
done
[ -z "$(squeue -h -j "$a,$b" -o %i)" ] || fail "the jobs did not end"

window=(start=now-1hour end=now+1hour)
sreport cluster utilization "${window[@]}" >util.txt
[ "$(sed -n 1p util.txt)" = "$dashes" ] || fail "title block: $(cat util.txt)"
grep -q "^Cluster Utilization [0-9T:-]* - [0-9T:-]*$" util.txt || fail "title: $(cat util.txt)"
grep -qx "Usage reported in CPU Minutes" util.txt || fail "usage line: $(cat util.txt)"
grep -qx "  Cluster Allocate     Down PLND Dow     Idle  Planned Reported " util.txt ||
  fail "columns: $(cat util.txt)"
sreport -n -P -t seconds cluster utilization "${window[@]}" >util.P
IFS='|' read -r cluster allocated down pdown idle planned reported <util.P
[ "$((allocated + idle))" = "$reported" ] || fail "allocated + idle != reported: $(cat util.P)"
sreport -n -P -T gres/gpu -t seconds cluster utilization "${window[@]}" >gpu.P
IFS='|' read -r cluster tres gpu_allocated gpu_down gpu_pdown gpu_idle gpu_planned gpu_reported <gpu.P
# The demo's 4 nodes have 8 GPUs each: Reported is 32 GPUs times the window.
[ "$tres" = gres/gpu ] && [ "$((gpu_allocated + gpu_idle))" = "$gpu_reported" ] &&
  [ "$((gpu_reported % 32))" = 0 ] && [ "$((gpu_reported / 32))" = "$((reported / 64))" ] ||
  fail "GPU seconds: $(cat gpu.P) against CPU seconds $(cat util.P)"
sreport -n -t percent cluster utilization "${window[@]}" | grep -q "100.00%" ||
  fail "percent: $(sreport -n -t percent cluster utilization "${window[@]}")"

sreport -P -t seconds cluster AccountUtilizationByUser "${window[@]}" >acct.P
grep -q "^Cluster/Account/User Utilization .* ([0-9]* secs)$" acct.P || fail "title: $(cat acct.P)"
grep -qx "Cluster|Account|Login|Proper Name|Used|Energy" acct.P || fail "header: $(cat acct.P)"
sreport -P user top "${window[@]}" >top.P
grep -qx "Cluster|Login|Proper Name|Account|Used|Energy" top.P || fail "top: $(cat top.P)"
grep -q "^Top 10 Users " top.P || fail "top: $(cat top.P)"

sreport job sizesbyaccount "${window[@]}" >sizes.txt
grep -qx "Time reported in Minutes" sizes.txt || fail "sizes: $(cat sizes.txt)"
grep -q "^  Cluster   Account     0-49 CPUs   50-249 CPUs  250-499 CPUs  500-999 CPUs  >= 1000 CPUs % of cluster $" \
  sizes.txt || fail "sizes columns: $(cat sizes.txt)"

code=0
sreport cluster nosuch >err.txt 2>&1 || code=$?
[ "$code" = 1 ] && grep -qx "Not valid report nosuch" err.txt || fail "unknown report: $code $(cat err.txt)"
code=0
sreport cluster utilization colour=blue >out.txt 2>err.txt || code=$?
[ "$code" = 1 ] && grep -qx " Unknown condition: colour=blue" err.txt || fail "unknown condition: $code $(cat err.txt)"
grep -q "^Cluster Utilization" out.txt || fail "the report still prints: $(cat out.txt)"
code=0
sreport -T frob cluster utilization >out.txt 2>&1 || code=$?
[ "$code" = 1 ] && grep -q "No valid TRES given" out.txt || fail "-T frob: $code $(cat out.txt)"
echo "sreport: all checks passed"
