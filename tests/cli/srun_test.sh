#!/bin/bash
# srun and salloc end to end on a local emulated cluster (drover up: a controller and four
# agents on loopback, in a temporary state directory; every process is stopped at exit):
# ranks and IDs of a multi-node step under sbatch, output and stdin streamed back, exit codes,
# --label, --multi-prog, per-task output files, --kill-on-bad-exit, salloc, steps in sacct, a
# step's share of its job (GPUs, memory, waiting for room), salloc --no-shell, input variables,
# a cancelled job taking its steps' tasks with it, resource limits (--propagate), --slurmd-debug,
# srun --test-only and --het-group, --bcast, sbatch --get-user-env, sacct -B/--env-vars under
# AccountingStoreFlags, and task layout and binding (-m, --cpu-bind, --mem-bind, --gpu-bind) under
# TaskPlugin=task/affinity.
set -euo pipefail
drover="$1"
source "$(dirname "$0")/cluster.sh"
# The demo cluster with task/affinity: tasks are bound to CPUs.
conf="$(mktemp -d /tmp/drover_srun_conf_XXXXXX)"
cp "$(dirname "$0")"/../../examples/demo/*.conf "$conf"
echo "TaskPlugin=task/affinity" >> "$conf/slurm.conf"
start_cluster srun --conf "$conf/slurm.conf"
rm -rf "$conf"
cd "$state/work"

wait_done() {  # JOBID: until it has left the running states
  for _ in $(seq 1 300); do
    st=$(sacct -X -n -P -j "$1" -o State 2>/dev/null | head -1)
    case "$st" in PENDING|RUNNING|"") sleep 0.1 ;; *) echo "$st"; return 0 ;; esac
  done
  fail "job $1 did not end"
}

# A two-node batch job with two tasks per node: srun inherits the shape.
cat > ranks.sh <<'SCRIPT'
#!/bin/bash
#SBATCH -N2 --ntasks-per-node=2 -o ranks.out
srun bash -c 'echo "rank=$SLURM_PROCID local=$SLURM_LOCALID node=$SLURM_NODEID host=$SLURMD_NODENAME ntasks=$SLURM_NTASKS step=$SLURM_STEP_ID"'
srun -n1 false || echo "second step failed: $?"
SCRIPT
id=$(sbatch --parsable ranks.sh)
[ "$(wait_done "$id")" = COMPLETED ] || fail "job $id: $(sacct -j "$id")"
sort ranks.out > ranks.sorted
cat > ranks.expected <<'TEXT'
rank=0 local=0 node=0 host=node1 ntasks=4 step=0
rank=1 local=1 node=0 host=node1 ntasks=4 step=0
rank=2 local=0 node=1 host=node2 ntasks=4 step=0
rank=3 local=1 node=1 host=node2 ntasks=4 step=0
second step failed: 1
srun: error: node1: task 0: Exited with exit code 1
TEXT
diff ranks.expected ranks.sorted || fail "ranks differ"
sacct -j "$id" -n -P -o JobID,JobName,State,ExitCode,NNodes,NTasks > steps.txt
cat > steps.expected <<TEXT
$id|ranks.sh|COMPLETED|0:0|2|
$id.batch|batch|COMPLETED|0:0|1|1
$id.0|bash|COMPLETED|0:0|2|4
$id.1|false|FAILED|1:0|1|1
TEXT
diff steps.expected steps.txt || fail "sacct steps differ"
# -j with a step ID lists that step alone, as Slurm does.
[ "$(sacct -j "$id.1,$id.batch" -n -P -o JobID)" = "$id.batch
$id.1" ] || fail "sacct -j $id.1,$id.batch: $(sacct -j "$id.1,$id.batch" -n -P -o JobID)"
# Measured use: each task's CPU time and peak memory, merged over the step's nodes; the batch
# step is the script's own processes; the job row adds up the CPU times of its steps.
cat > burn.sh <<'SCRIPT'
#!/bin/bash
#SBATCH -N2 --ntasks-per-node=1 -o burn.out
srun bash -c 'x=$(head -c 30000000 /dev/zero | tr "\0" a); i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; echo ${#x}'
SCRIPT
burn=$(sbatch --parsable burn.sh)
[ "$(wait_done "$burn")" = COMPLETED ] || fail "job $burn: $(sacct -j "$burn"; cat burn.out)"
sacct -j "$burn" -n -P -o JobID,TotalCPU,UserCPU,MaxRSS,MaxRSSNode,MaxRSSTask,AveRSS,MinCPUNode,TRESUsageInTot > usage.txt
kib() { awk -v v="$1" 'BEGIN { n = v + 0; u = substr(v, length(v));
  if (u == "K") n *= 1; else if (u == "M") n *= 1024; else if (u == "G") n *= 1048576; else n /= 1024;
  printf "%d", n }'; }
secs() { awk -v v="$1" 'BEGIN { n = split(v, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.3f", s }'; }
IFS='|' read -r _ job_total _ job_rss _ < <(grep "^$burn|" usage.txt)
IFS='|' read -r _ step_total step_user step_rss rss_node rss_task ave_rss cpu_node tres < <(grep "^$burn.0|" usage.txt)
IFS='|' read -r _ batch_total _ batch_rss batch_node batch_task _ _ _ < <(grep "^$burn.batch|" usage.txt)
[ -z "$job_rss" ] || fail "the job row has no MaxRSS of its own: $(cat usage.txt)"
[ "$(kib "$step_rss")" -ge 29000 ] || fail "step MaxRSS $step_rss is below the 30 MB a task held: $(cat usage.txt)"
[ "$(kib "$ave_rss")" -ge 29000 ] || fail "step AveRSS $ave_rss: $(cat usage.txt)"
case "$rss_node,$cpu_node" in node[12],node[12]) ;; *) fail "MaxRSSNode/MinCPUNode: $(cat usage.txt)" ;; esac
case "$rss_task" in 0|1) ;; *) fail "MaxRSSTask $rss_task" ;; esac
case "$tres" in cpu=*,mem=*) ;; *) fail "TRESUsageInTot $tres" ;; esac
[ "$batch_node,$batch_task" = "node1,0" ] || fail "batch step's MaxRSSNode/Task: $(cat usage.txt)"
[ -n "$batch_rss" ] || fail "the batch step's MaxRSS is blank: $(cat usage.txt)"
awk -v s="$(secs "$step_total")" -v u="$(secs "$step_user")" -v j="$(secs "$job_total")" \
    -v b="$(secs "$batch_total")" 'BEGIN { exit !(s > 0.05 && u > 0 && u <= s && j + 0.002 >= s + b) }' ||
  fail "CPU times: step $step_total (user $step_user), batch $batch_total, job $job_total"
[ "$(sacct -X -j "$burn" -n -P -o TotalCPU)" = "00:00:00" ] || fail "-X fetches no steps: TotalCPU 0"
# The same in sacct --json, and squeue/sinfo --json parse as JSON (python3 comes with the tests'
# Snakemake; without it these checks are skipped).
if command -v python3 >/dev/null; then
  sacct --json -j "$id" | python3 -c '
import json, sys
job = json.load(sys.stdin)["jobs"][0]
steps = [(s["step"]["id"], s["state"], s["exit_code"]["return_code"]) for s in job["steps"]]
want = [(f"{sys.argv[1]}.batch", "COMPLETED", 0), (f"{sys.argv[1]}.0", "COMPLETED", 0),
        (f"{sys.argv[1]}.1", "FAILED", 1)]
assert job["state"]["current"] == "COMPLETED" and steps == want, steps
' "$id" || fail "sacct --json"
  squeue --json -t all | python3 -c 'import json, sys; assert "jobs" in json.load(sys.stdin)' ||
    fail "squeue --json"
  sinfo --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert len(d["nodes"]) == 4 and d["partitions"], d.keys()' || fail "sinfo --json"
fi

# Layout and binding. -m cyclic deals the ranks over the nodes in turn; -m arbitrary puts task t
# on SLURM_HOSTFILE's line t; on a whole node --cpu-bind=map_cpu binds each task to its CPU (an
# emulated node's CPU c is this host's (c mod N)-th); --mem-bind=local on the task's NUMA node;
# --gpu-bind=single:1 gives each task one of the step's GPUs.
cat > layout.sh <<'SCRIPT'
#!/bin/bash
#SBATCH -N2 --exclusive --gpus-per-node=2 -o layout.out
srun -n4 -m cyclic bash -c 'echo "rank=$SLURM_PROCID host=$SLURMD_NODENAME gtids=$SLURM_GTIDS dist=$SLURM_DISTRIBUTION tpn=$SLURM_TASKS_PER_NODE"'
printf 'node2\nnode1,node2\n' > hosts.txt
SLURM_HOSTFILE=hosts.txt srun -n3 -m arbitrary bash -c 'echo "arbitrary rank=$SLURM_PROCID host=$SLURMD_NODENAME"'
srun -N1 -n2 --cpu-bind=verbose,map_cpu:1,0 bash -c 'echo "bind $SLURM_PROCID $(grep Cpus_allowed_list /proc/self/status | cut -f2) $SLURM_CPU_BIND"'
srun -N1 -n1 --mem-bind=v,local true
srun -N1 -n2 --hint=compute_bound --cpu-bind=verbose true
srun -N1 -n2 --gpu-bind=single:1 bash -c 'echo "gpu $SLURM_PROCID $CUDA_VISIBLE_DEVICES"'
SCRIPT
id=$(sbatch --parsable layout.sh)
[ "$(wait_done "$id")" = COMPLETED ] || fail "job $id: $(sacct -j "$id"; cat layout.out)"
grep '^rank=' layout.out | sort > layout.sorted
cat > layout.expected <<'TEXT'
rank=0 host=node1 gtids=0,2 dist=cyclic tpn=2(x2)
rank=1 host=node2 gtids=1,3 dist=cyclic tpn=2(x2)
rank=2 host=node1 gtids=0,2 dist=cyclic tpn=2(x2)
rank=3 host=node2 gtids=1,3 dist=cyclic tpn=2(x2)
TEXT
diff layout.expected layout.sorted || fail "-m cyclic: $(cat layout.out)"
[ "$(grep '^arbitrary' layout.out | sort | tr '\n' '|')" = "arbitrary rank=0 host=node2|arbitrary rank=1 host=node1|arbitrary rank=2 host=node2|" ] ||
  fail "-m arbitrary: $(cat layout.out)"
# The CPUs this host lets the agents use, in order: map_cpu:1,0 is the 2nd (mod N) and the 1st.
mapfile -t host_cpus < <(python3 -c '
import os
print("\n".join(str(c) for c in sorted(os.sched_getaffinity(0))))')
want0=${host_cpus[$((1 % ${#host_cpus[@]}))]}
want1=${host_cpus[0]}
grep -qx "bind 0 $want0 verbose,map_cpu:1,0" layout.out || fail "map_cpu task 0: $(cat layout.out)"
grep -qx "bind 1 $want1 verbose,map_cpu:1,0" layout.out || fail "map_cpu task 1: $(cat layout.out)"
grep -Eq "^cpu-bind=MAP  - node1, task  0  0 \[[0-9]+\]: mask 0x[0-9a-f]+ set$" layout.out ||
  fail "cpu-bind verbose: $(cat layout.out)"
grep -Eq "^cpu-bind-cores=MASK - node1, task  1  1 \[[0-9]+\]: mask 0x[0-9a-f]+ set$" layout.out ||
  fail "--hint=compute_bound: $(cat layout.out)"
grep -Eq "^mem-bind=LOC - node1, task  0  0 \[[0-9]+\]: mask 0x[0-9a-f]+ set$" layout.out ||
  fail "mem-bind verbose: $(cat layout.out)"
gpus=$(grep '^gpu ' layout.out | sort | cut -d' ' -f3 | tr '\n' ' ')
[[ "$gpus" =~ ^[0-9]+\ [0-9]+\ $ ]] && [ "$(echo "$gpus" | tr ' ' '\n' | sort -u | grep -c .)" = 2 ] ||
  fail "--gpu-bind=single:1: $(cat layout.out)"
# salloc -m hands the distribution to the steps srun starts in the allocation.
[ "$(salloc -Q -N2 -m cyclic srun -n4 -l printenv SLURMD_NODENAME | sort | tr '\n' '|')" = "0: node1|1: node2|2: node1|3: node2|" ] ||
  fail "salloc -m cyclic"

# Outside an allocation: srun allocates, runs, and exits with the step's code.
out=$(srun -N2 -l hostname | sort | cut -d: -f1 | tr '\n' ' ')
[ "$out" = "0 1 " ] || fail "srun -N2 -l: '$out'"
set +e
srun sh -c 'echo to-out; echo to-err >&2; exit 3' > o.txt 2> e.txt
rc=$?
set -e
[ "$rc" = 3 ] || fail "srun exit code $rc, not 3"
grep -qx to-out o.txt || fail "stdout: $(cat o.txt)"
grep -qx to-err e.txt || fail "stderr: $(cat e.txt)"
grep -q "task 0: Exited with exit code 3" e.txt || fail "no exit report: $(cat e.txt)"
[ "$(printf 'line1\nline2\n' | srun cat)" = "$(printf 'line1\nline2')" ] || fail "stdin to task 0"

# --multi-prog, per-task output files.
printf '0 echo zero %%t\n1-2 echo other %%t %%o\n' > multi.conf
[ "$(srun -n3 --multi-prog multi.conf | sort | tr '\n' '|')" = "other 1 0|other 2 1|zero 0|" ] ||
  fail "--multi-prog"
srun -n2 -o 'task-%t.out' sh -c 'echo "I am $SLURM_PROCID"'
[ "$(cat task-0.out)" = "I am 0" ] && [ "$(cat task-1.out)" = "I am 1" ] || fail "-o %t files"

# --kill-on-bad-exit: one failing task ends the others at once.
start=$(date +%s)
set +e
srun -n2 -K sh -c 'if [ "$SLURM_PROCID" = 0 ]; then exit 4; fi; exec sleep 60' 2> k.txt
rc=$?
set -e
[ "$rc" != 0 ] || fail "-K: exit code 0"
[ $(( $(date +%s) - start )) -lt 30 ] || fail "-K did not end the other task"

# salloc: the command runs here with the allocation; srun inside uses its nodes.
salloc -N2 bash -c 'echo "job=$SLURM_JOB_ID nodes=$SLURM_JOB_NODELIST"; srun -l printenv SLURMD_NODENAME; echo "relative=$(srun -r1 -N1 printenv SLURMD_NODENAME)"; echo "nnodes=$(srun -N1 printenv SLURM_NNODES) preserved=$(srun -E -N1 printenv SLURM_NNODES SLURM_STEP_NUM_NODES | tr "\n" " ")"' > salloc.out 2> salloc.err
grep -q "^job=[0-9]* nodes=node\[1-2\]$" salloc.out || fail "salloc: $(cat salloc.out)"
grep -qx "1: node2" salloc.out || fail "srun inside salloc: $(cat salloc.out)"
grep -qx "relative=node2" salloc.out || fail "srun -r1 inside salloc: $(cat salloc.out)"
grep -qx "nnodes=1 preserved=2 1 " salloc.out || fail "srun -E inside salloc: $(cat salloc.out)"
grep -q "Granted job allocation" salloc.err || fail "salloc said: $(cat salloc.err)"
alloc=$(sed -n 's/^job=\([0-9]*\) .*/\1/p' salloc.out)
[ "$(wait_done "$alloc")" = COMPLETED ] || fail "salloc job $alloc: $(sacct -j "$alloc")"
sacct -j "$alloc" -n -P -o JobID | grep -q "^$alloc.0$" || fail "salloc step not in sacct"
sacct -j "$alloc" -n -P -o JobID | grep -q "batch" && fail "an interactive job has no batch step"

# A step's share of its job: its own GPUs; a step that needs what a running one holds waits
# ("step creation temporarily disabled") and starts once it is free; too much memory is refused.
cat > shares.sh <<'SCRIPT'
#!/bin/bash
#SBATCH -N1 -n2 --gpus=2 --mem=1000 -o shares.out
srun -n1 --exact --gpus=1 printenv SLURM_STEP_GPUS CUDA_VISIBLE_DEVICES | tr '\n' ' ' > one-gpu.txt
srun -n1 --mem=2000 true 2> too-much.txt || echo "too much: $?"
srun -n1 --exact --gpus=2 sh -c 'touch held; while [ ! -e release ]; do sleep 0.1; done' &
for _ in $(seq 1 300); do [ -e held ] && break; sleep 0.1; done
srun -n1 --exact --gpus=1 printenv SLURM_STEP_GPUS > second.out 2> second.err &
for _ in $(seq 1 300); do grep -q "temporarily disabled" second.err && break; sleep 0.1; done
touch release
wait
SCRIPT
id=$(sbatch --parsable shares.sh)
[ "$(wait_done "$id")" = COMPLETED ] || fail "job $id: $(sacct -j "$id"; cat shares.out)"
grep -Eq '^([0-7]) \1 $' one-gpu.txt || fail "one GPU step: '$(cat one-gpu.txt)'"
grep -q "Unable to create step for job $id: Memory required by task is not available" \
  too-much.txt || fail "--mem beyond the job: $(cat too-much.txt)"
grep -q "^srun: Job $id step creation temporarily disabled, retrying (Requested nodes are busy)$" \
  second.err && grep -q "^srun: Step created for StepId=$id\.[0-9]*$" second.err ||
  fail "the waiting step said: $(cat second.err)"
grep -Eq '^[0-7]$' second.out || fail "waiting step's GPU: $(cat second.out)"

# salloc --no-shell: the allocation stays without a command until scancel; srun --jobid uses it.
salloc --no-shell -N1 2> noshell.err
noshell=$(sed -n 's/^salloc: Granted job allocation \([0-9]*\)$/\1/p' noshell.err)
[ -n "$noshell" ] || fail "salloc --no-shell said: $(cat noshell.err)"
[ "$(squeue -h -j "$noshell" -o %T)" = RUNNING ] || fail "--no-shell allocation not running"
[ "$(srun --jobid="$noshell" printenv SLURM_JOB_ID)" = "$noshell" ] || fail "srun --jobid"
scancel "$noshell"
case "$(wait_done "$noshell")" in CANCELLED*) ;; *) fail "--no-shell job after scancel: $(sacct -j "$noshell")" ;; esac

# Input variables stand for options; --mpi=list; no X11 forwarding, as Slurm without it.
[ "$(SLURM_LABELIO=1 srun -n2 echo x | sort | tr '\n' ' ')" = "0: x 1: x " ] ||
  fail "SLURM_LABELIO"
srun --mpi=list | grep -qx $'\tpmi2' || fail "--mpi=list: $(srun --mpi=list)"
x11=$(srun --x11 true 2>&1 || true)
[ "$x11" = "srun: error: Unable to allocate resources: X11 forwarding not available" ] ||
  fail "--x11: $x11"

# -T: srun's launch threads, checked as Slurm's srun checks them (a bad count is reset).
srun -T0 true 2> threads.err && grep -qx "srun: error: Thread value invalid, reset to 1" \
  threads.err || fail "-T0: $(cat threads.err)"
srun -T61 true 2> threads.err && grep -qx \
  "srun: error: Thread value exceeds defined limit, reset to 60" threads.err || fail "-T61"
threads=$(srun -Tx true 2>&1 || true)
[ "$threads" = 'srun: error: Invalid numeric value "x" for --threads.' ] || fail "-Tx: $threads"

# --resv-ports: no MpiParams=ports, so the step needs more ports than exist, as in Slurm.
ports=$(srun --resv-ports=2 true 2>&1 || true)
[[ "$ports" == *"Unable to create step for job "*": Requires more ports than can be reserved" ]] ||
  fail "--resv-ports: $ports"

# --task-prolog runs before each task, its "export", "unset" and "print" lines read as
# slurmstepd reads them; --task-epilog after each task, with the task's environment.
printf '#!/bin/sh\necho "export FROM_PROLOG=rank$SLURM_PROCID"\necho "unset DROP_ME"\necho "print hi $SLURM_PROCID"\n' > tprolog.sh
printf '#!/bin/sh\necho "$SLURM_PROCID $FROM_PROLOG" > "tepilog-$SLURM_PROCID.out"\n' > tepilog.sh
chmod +x tprolog.sh tepilog.sh
out=$(DROP_ME=1 srun -n2 --task-prolog=./tprolog.sh --task-epilog=./tepilog.sh \
  sh -c 'echo "$FROM_PROLOG ${DROP_ME:-unset}"' | sort | tr '\n' '|')
[ "$out" = "hi 0|hi 1|rank0 unset|rank1 unset|" ] || fail "--task-prolog: '$out'"
[ "$(cat tepilog-0.out tepilog-1.out | tr '\n' '|')" = "0 rank0|1 rank1|" ] ||
  fail "--task-epilog: $(cat tepilog-*.out)"

# --nodefile: the allocation's nodes from a file, as sbatch reads it; a missing file is named.
echo node3 > nodes.txt
[ "$(srun -N1 --nodefile=nodes.txt printenv SLURMD_NODENAME)" = node3 ] ||
  fail "srun --nodefile did not run on the file's node"
srun -N1 --nodefile=missing.txt true 2> nodefile.err && fail "srun --nodefile=missing.txt ran"
grep -q "Unable to read --nodefile file missing.txt: No such file or directory" nodefile.err ||
  fail "nodefile error: $(cat nodefile.err)"

# Cancelling a job ends its steps' tasks.
cat > long.sh <<'SCRIPT'
#!/bin/bash
#SBATCH -N2 -o long.out
srun bash -c 'echo $$ > step-pid-$SLURM_PROCID; exec sleep 300'
SCRIPT
id=$(sbatch --parsable long.sh)
for _ in $(seq 1 600); do [ -s step-pid-0 ] && [ -s step-pid-1 ] && break; sleep 0.1; done
[ -s step-pid-0 ] && [ -s step-pid-1 ] || fail "step tasks did not start"
scancel "$id"
wait_done "$id" > /dev/null
for _ in $(seq 1 100); do
  alive=0
  for f in step-pid-0 step-pid-1; do kill -0 "$(cat $f)" 2>/dev/null && alive=1; done
  [ $alive = 0 ] && break
  sleep 0.1
done
[ $alive = 0 ] || fail "a step task outlived its cancelled job"
# --propagate: the submitting shell's soft limit reaches the batch shell and srun's tasks; by
# default (PropagateResourceLimits=ALL) too, and a NONE leaves the agent's own.
cat > limits.sh <<'SCRIPT'
#!/bin/bash
#SBATCH -o limits.out
echo "batch $(ulimit -S -n)"
srun -n1 bash -c 'echo "step $(ulimit -S -n)"'
(ulimit -S -n 200; srun -n1 --propagate=NONE bash -c 'echo "none $(ulimit -S -n)"')
SCRIPT
agent_files=$(ulimit -S -n)
id=$( (ulimit -S -n 256; sbatch --parsable --propagate=NOFILE limits.sh) )
[ "$(wait_done "$id")" = COMPLETED ] || fail "job $id: $(sacct -j "$id")"
printf 'batch 256\nstep 256\nnone %s\n' "$agent_files" | diff - limits.out || fail "--propagate"
[ "$( (ulimit -S -n 300; sbatch --propagate=NOFILE --wrap 'ulimit -n' -o wrap.out --wait) >/dev/null;
      cat wrap.out)" = 300 ] || fail "sbatch --propagate=NOFILE --wrap: $(cat wrap.out)"
# The controller keeps the limits with the stored environment; none of it reaches the job's.
sbatch --wrap 'env | grep -c "^DROVER:" || true' -o env.out --wait > /dev/null
[ "$(cat env.out)" = 0 ] || fail "the stored limits reached the job's environment: $(cat env.out)"
[ "$( (ulimit -S -n 310; srun -n1 bash -c 'ulimit -S -n') )" = 310 ] || fail "srun's default propagation"
sbatch --propagate=NOFILES --wrap true > err.txt 2>&1 && fail "--propagate=NOFILES"
grep -qxF "sbatch: error: --propagate=NOFILES is not valid." err.txt || fail "--propagate: $(cat err.txt)"
# --slurmd-debug=verbose: the step's agent reports each task's end on its stderr.
srun -Q -n1 --slurmd-debug=verbose --msg-timeout=5 true 2> debug.txt || fail "srun --slurmd-debug"
grep -qE '^droverstepd: task 0 \([0-9]+\) exited with exit code 0\.$' debug.txt ||
  fail "--slurmd-debug=verbose: $(cat debug.txt)"
srun -Q -n1 true 2> debug.txt && [ ! -s debug.txt ] || fail "srun without --slurmd-debug: $(cat debug.txt)"
srun -n1 --msg-timeout=0 true 2> err.txt && fail "--msg-timeout=0"
grep -qxF 'srun: error: Invalid numeric value "0" for --msg-timeout.' err.txt || fail "--msg-timeout=0: $(cat err.txt)"
# srun --test-only: when the job would start, nothing queued or run.
# (Compared as job IDs: an earlier job may leave the queue meanwhile, but none may come.)
before=$(squeue -h -t all -o %i | sort)
srun --test-only -N2 touch ran.txt 2> test_only.txt || fail "srun --test-only: $(cat test_only.txt)"
grep -qE '^srun: Job [0-9]+ to start at [0-9T:-]+ using [0-9]+ processors on nodes [^ ]+ in partition [^ ]+$' test_only.txt ||
  fail "srun --test-only said: $(cat test_only.txt)"
new_jobs=$(comm -13 <(echo "$before") <(squeue -h -t all -o %i | sort))
[ ! -e ran.txt ] && [ -z "$new_jobs" ] || fail "srun --test-only ran or queued: $new_jobs"
# --het-group: a job has one component, 0.
[ "$(srun -n1 --het-group=0 echo ok)" = ok ] || fail "--het-group=0"
srun -n1 --het-group=1 true 2> err.txt && fail "--het-group=1"
grep -qxF "srun: error: Requested het-group offset exceeds highest hetjob index (1 > 0)" err.txt ||
  fail "--het-group=1: $(cat err.txt)"
# sbatch --get-user-env: the job runs with the user's login environment under its own: every
# variable a fresh login environment has beyond what a job gets without the option (su - as
# root, the user's login shell otherwise, as the agent reads it) reaches the job.
printf '#!/bin/bash\nenv | cut -d= -f1 | sort\n' > names.sh
plain=$(env -i PATH="$PATH" DROVER_CONF="$DROVER_CONF" sbatch --parsable -o plain.names names.sh)
login=$(env -i PATH="$PATH" DROVER_CONF="$DROVER_CONF" sbatch --parsable --get-user-env=20 -o login.names names.sh)
[ "$(wait_done "$plain")" = COMPLETED ] && [ "$(wait_done "$login")" = COMPLETED ] ||
  fail "--get-user-env jobs: $(sacct -j "$plain,$login")"
if [ "$(id -u)" = 0 ]; then env -i su - "$(id -un)" -c env < /dev/null
else env -i HOME="$HOME" "$(getent passwd "$(id -un)" | cut -d: -f7)" -l -c env < /dev/null; fi |
  cut -d= -f1 | grep -vxE '_|PWD|OLDPWD|SHLVL' | sort > fresh.names
for name in $(comm -23 fresh.names plain.names); do
  grep -qx "$name" login.names || fail "--get-user-env: $name of the login environment is missing"
done
grep -qx SLURM_GET_USER_ENV login.names && ! grep -qx SLURM_GET_USER_ENV plain.names ||
  fail "SLURM_GET_USER_ENV: $(grep SLURM_GET plain.names login.names)"

# --bcast: each node writes the program as slurm_bcast_JOB.STEP_NODE in the directory asked for,
# as the user, and its tasks run that copy; --send-libs adds the libraries BcastExclude does not
# leave out, first on LD_LIBRARY_PATH; --compress sends the launch compressed.
mkdir -p bc
srun -N2 --bcast="$PWD/bc/" --compress bash -c 'readlink /proc/$$/exe; true' > bcast.txt || fail "srun --bcast"
[ "$(grep -cE "^$PWD/bc/slurm_bcast_[0-9]+\.0_node[12]\$" bcast.txt)" = 2 ] || fail "--bcast ran: $(cat bcast.txt)"
for copy in $(cat bcast.txt); do
  cmp -s "$copy" "$(command -v bash)" && [ -x "$copy" ] && [ -O "$copy" ] || fail "--bcast copy $copy"
done
srun -n1 --bcast="$PWD/bc/" --send-libs --bcast-exclude=NONE bash -c \
  'echo "${LD_LIBRARY_PATH%%:*}"; ls "${LD_LIBRARY_PATH%%:*}"' > libs.txt || fail "--send-libs"
head -1 libs.txt | grep -qE "^$PWD/bc/slurm_bcast_[0-9]+\.0_node[0-9]+_libs\$" && grep -qx libc.so.6 libs.txt ||
  fail "--send-libs: $(cat libs.txt)"
srun -n1 --compress=zstd true 2> err.txt || fail "--compress=zstd"
grep -qxF "srun: error: Compression type 'zstd' unknown, disabling compression support." err.txt ||
  fail "--compress=zstd: $(cat err.txt)"
head -c $((65 << 20)) /dev/zero > big && chmod +x big
srun -n1 --bcast="$PWD/bc/" ./big 2> err.txt && fail "--bcast of 65 MiB"
grep -qF "come to more than 64 MiB, the most a step's launch carries" err.txt || fail "--bcast big: $(cat err.txt)"
rm -f big

# sacct -B / --env-vars: Slurm's "NONE" until AccountingStoreFlags keeps them; then a job's
# script and environment after it has left the live queue (MinJobAge=1).
rule=$(printf -- '-%.0s' $(seq 1 80))
printf '#!/bin/bash\n#SBATCH -o kept.out\necho kept\n' > kept.sh
id=$(sbatch --parsable kept.sh)
[ "$(wait_done "$id")" = COMPLETED ] || fail "job $id: $(sacct -j "$id")"
sacct -B -j "$id" > script.txt
printf 'Batch Script for %s\n%s\nNONE\n\n' "$id" "$rule" | diff - script.txt || fail "sacct -B without job_script"
sacct -B > err.txt 2>&1 && fail "sacct -B without -j"
grep -qxF "sacct: fatal: When requesting job scripts you must also request specific jobs with the '-j' option." err.txt ||
  fail "sacct -B without -j: $(cat err.txt)"
sacct -B --env-vars -j "$id" > err.txt 2>&1 && fail "sacct -B --env-vars"
grep -qxF "sacct: fatal: Options --batch-script and --env-vars are mutually exclusive" err.txt ||
  fail "sacct -B --env-vars: $(cat err.txt)"
printf 'AccountingStoreFlags=job_script,job_env\nMinJobAge=1\n' >> "$DROVER_CONF"
scontrol reconfigure || fail "reconfigure"
id=$(KEPT_MARK=yes sbatch --parsable kept.sh)
[ "$(wait_done "$id")" = COMPLETED ] || fail "job $id: $(sacct -j "$id")"
for _ in $(seq 1 100); do scontrol show job "$id" > /dev/null 2>&1 || break; sleep 0.1; done
scontrol show job "$id" > /dev/null 2>&1 && fail "job $id stayed in the live queue"
sacct -B -j "$id" > script.txt
{ printf 'Batch Script for %s\n%s\n' "$id" "$rule"; cat kept.sh; echo; } | diff - script.txt ||
  fail "sacct -B of a finished job"
sacct --env-vars -j "$id" > env.txt
head -2 env.txt | diff - <(printf 'Environment used for %s (must be batch to display)\n%s\n' "$id" "$rule") ||
  fail "sacct --env-vars header: $(head -2 env.txt)"
grep -qx "KEPT_MARK=yes" env.txt || fail "sacct --env-vars: $(cat env.txt)"
echo PASS
