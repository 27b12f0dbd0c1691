#!/bin/bash
# drover sim as a command: the report (text, --json, --jobs CSV) of a five-job trace whose
# schedules are known, byte-identical from run to run with --no-timing; --compare of two
# configurations; --strict naming the bad line; and the errors for bad options.
# Usage: sim_test.sh DROVER
set -euo pipefail
drover="$1"
here="$(cd "$(dirname "$0")/../sim" && pwd)"
work="$(mktemp -d /tmp/drover_sim_test_XXXXXX)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$work"
cluster=(--nodes 4 --cores-per-node 1)

# EASY with priority/basic: the starts worked out by hand.
"$drover" sim --trace "$here/five.swf" "${cluster[@]}" --priority basic --no-timing \
  --json --jobs jobs.csv > easy.json || fail "drover sim exited $?"
starts=$(tail -n +2 jobs.csv | cut -d, -f5 | tr '\n' ' ')
[ "$starts" = "0 0 100 53 3 " ] || fail "EASY starts: $starts"
grep -q '"policy": "easy"' easy.json || fail "no policy in $(cat easy.json)"
grep -q '"makespan_s": 110,' easy.json || fail "makespan: $(grep makespan easy.json)"
grep -q '"mean_cycle_ms": null,' easy.json || fail "--no-timing left the timing in"
for key in jobs makespan_s utilization mean_wait_s median_wait_s p95_wait_s mean_bounded_slowdown \
    cycles mean_cycle_ms max_cycle_ms; do
  grep -q "^  \"$key\": " easy.json || fail "no top-level $key"
done
"$drover" sim --trace "$here/five.swf" "${cluster[@]}" --priority basic --no-timing --json > again.json
cmp -s easy.json again.json || fail "two runs differ: $(diff easy.json again.json)"

"$drover" sim --trace "$here/five.swf" "${cluster[@]}" --priority basic --policy conservative \
  --jobs conservative.csv > conservative.txt
[ "$(tail -n +2 conservative.csv | cut -d, -f5 | tr '\n' ' ')" = "0 0 100 30 110 " ] ||
  fail "conservative starts: $(cat conservative.csv)"
grep -q "^policy              conservative (priority/basic)$" conservative.txt || fail "$(cat conservative.txt)"
grep -q "^scheduler  .* cycles, mean [0-9.]* ms" conservative.txt || fail "no cost line"

# --compare: two configurations side by side.
for policy in builtin backfill; do
  cat > "$policy.conf" <<CONF
ClusterName=c
SchedulerType=sched/$policy
PriorityType=priority/basic
SlurmdTimeout=0
NodeName=n[1-4] CPUs=1 RealMemory=1000
PartitionName=p Nodes=ALL Default=YES MaxTime=UNLIMITED
CONF
done
"$drover" sim --trace "$here/five.swf" --compare builtin.conf backfill.conf > compare.txt
grep -q "^mean_wait_s  *62.8  *30  *-52.2%$" compare.txt || fail "compare: $(cat compare.txt)"

# --accounts: a sacctmgr dump file's limits change the schedule (GrpJobs=1: one at a time).
cat > limits.conf <<CONF
ClusterName=c
SchedulerType=sched/backfill
PriorityType=priority/basic
AccountingStorageEnforce=limits
SlurmdTimeout=0
NodeName=n[1-4] CPUs=1 RealMemory=1000
PartitionName=p Nodes=ALL Default=YES MaxTime=UNLIMITED
CONF
"$drover" sim --trace "$here/five.swf" --conf limits.conf --accounts "$here/five_accounts.cfg" \
  --no-timing --jobs limited.csv > limited.txt
[ "$(tail -n +2 limited.csv | cut -d, -f5 | tr '\n' ' ')" = "0 100 130 140 180 " ] ||
  fail "--accounts starts: $(cat limited.csv)"
# Without it the enforced associations refuse every job.
"$drover" sim --trace "$here/five.swf" --conf limits.conf --no-timing > unlimited.txt
grep -q "^skipped             5 (5 refused at submission: Invalid account" unlimited.txt ||
  fail "without --accounts: $(cat unlimited.txt)"
printf 'Cluster - c\nAccount - x:Colour=blue\n' > bad.cfg
set +e
"$drover" sim --trace "$here/five.swf" --conf limits.conf --accounts bad.cfg 2> err3.txt; rc3=$?
set -e
[ "$rc3" = 1 ] && grep -q "^drover sim: error: --accounts bad.cfg: Unknown option: Colour=blue" err3.txt ||
  fail "bad --accounts: $rc3 $(cat err3.txt)"

# Bad input: skipped and counted, or with --strict the line named.
cp "$here/five.swf" bad.swf
echo "6 4 -1 20" >> bad.swf
"$drover" sim --trace bad.swf "${cluster[@]}" > bad.txt
grep -q "^skipped             1 (1 malformed line)$" bad.txt || fail "skip: $(cat bad.txt)"
set +e
"$drover" sim --trace bad.swf "${cluster[@]}" --strict > /dev/null 2> err.txt; rc=$?
"$drover" sim --trace bad.swf --nodes 0 2> err0.txt; rc0=$?
"$drover" sim --trace bad.swf "${cluster[@]}" --policy lottery 2> err1.txt; rc1=$?
"$drover" sim --trace missing.swf "${cluster[@]}" 2> err2.txt; rc2=$?
set -e
[ "$rc" = 1 ] || fail "--strict exited $rc"
grep -qx "drover sim: error: bad.swf:8: malformed line: 4 fields, SWF has 18 (without --strict such lines are skipped and counted)" err.txt ||
  fail "--strict said: $(cat err.txt)"
[ "$rc0" = 2 ] && grep -q "at least 1" err0.txt || fail "--nodes 0: $rc0 $(cat err0.txt)"
[ "$rc1" = 2 ] && grep -q "fcfs, easy or conservative" err1.txt || fail "--policy: $rc1 $(cat err1.txt)"
[ "$rc2" = 1 ] && grep -q "cannot read missing.swf" err2.txt || fail "missing: $rc2 $(cat err2.txt)"
echo PASS
