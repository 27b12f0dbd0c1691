#!/bin/bash
# sattach: attached to a running two-node step, it prints the tasks' output (labelled, filtered),
# gives its stdin to task 0, prints the layout, ends with the step, and the errors read as
# Slurm's.
set -euo pipefail
drover="$1"
root_dir="$2"
source "$(dirname "$0")/cluster.sh"
start_cluster sattach --conf "$root_dir/examples/demo/slurm.conf"
cd "$state/work"
mkfifo in
exec 3<>in  # srun's stdin stays open (and empty) until sattach writes to task 0
srun -N2 -n4 -l bash -c 'if [ "$SLURM_PROCID" = 0 ]; then read -r line; echo "got $line"; fi
  for i in $(seq 1 40); do echo "task $SLURM_PROCID tick $i"; sleep 0.25; done' <in >srun.out 2>&1 &
srun_pid=$!
on_fail() { cat srun.out; }
running() { [ "$(squeue -h -s -o %i 2>/dev/null | grep -c '\.0$')" = 1 ]; }
poll 300 running || fail "the step never ran"
step=$(squeue -h -s -o %i | grep '\.0$')
job=${step%.0}
layout=$(sattach --layout "$step")
grep -q "4 tasks, 2 nodes (node\[1-2\])" <<<"$layout" || fail "--layout: $layout"
grep -q "Node 0 (node1), 2 task(s): 0 1" <<<"$layout" || fail "--layout node 0: $layout"
grep -q "Node 1 (node2), 2 task(s): 2 3" <<<"$layout" || fail "--layout node 1: $layout"
# Errors, while the step runs.
sattach "$job.7" 2>err.txt && fail "sattach to a step that does not run succeeded"
grep -q "sattach: error: Job step $job.7 not found" err.txt || fail "no step: $(cat err.txt)"
sattach bogus 2>err.txt && fail "sattach bogus succeeded"
grep -q "Invalid job step bogus" err.txt || fail "bogus: $(cat err.txt)"
sattach --pty "$step" 2>err.txt && fail "--pty was accepted"
grep -q -- "--pty" err.txt || fail "--pty: $(cat err.txt)"
# Filtered: only task 3's stdout.
timeout 60 sattach --output-filter=3 "$step" </dev/null >filtered.out 2>&1 &
filtered_pid=$!
# Labelled, with stdin for task 0.
echo hello | timeout 60 sattach -l "$step" >attached.out 2>&1 || fail "sattach: $(cat attached.out)"
wait "$filtered_pid" || fail "sattach --output-filter: $(cat filtered.out)"
wait "$srun_pid" || fail "the step failed: $(cat srun.out)"
grep -q "^0: got hello$" attached.out || fail "stdin to task 0: $(cat attached.out)"
grep -q "^0: got hello$" srun.out || fail "srun did not see task 0's answer: $(cat srun.out)"
grep -q "^2: task 2 tick 40$" attached.out || fail "task 2 to the end: $(cat attached.out)"
grep -q "^task 3 tick 40$" filtered.out || fail "--output-filter=3: $(cat filtered.out)"
! grep -qv "^task 3 " filtered.out || fail "--output-filter=3 let others through: $(cat filtered.out)"
echo PASS
