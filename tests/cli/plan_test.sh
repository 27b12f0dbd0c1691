#!/bin/bash
# The plan ahead on a real cluster (`drover up` of the demo configuration with a 4-second
# GraceTime on the low-tier partition, on loopback, in a temporary state directory; `drover
# down` stops every process it started):
#   - a maintenance reservation shows as maint in sinfo and keeps a long job off its node while a
#     short one backfills there; squeue --start and scontrol show job give the long job's
#     expected start and nodes;
#   - a low-tier job given --signal=B:TERM@180 (its batch shell traps it) is preempted by a
#     high-tier one: it gets SIGTERM,
#     writes a checkpoint in its grace time, is requeued, and resumes from the checkpoint with
#     SLURM_RESTART_COUNT=1; sacct -D shows the preempted run as PREEMPTED.
# Usage: plan_test.sh DROVER
set -euo pipefail
drover="$1"
source "$(dirname "$0")/cluster.sh"
conf="$(mktemp -d /tmp/drover_plan_conf_XXXXXX)"
cp "$(dirname "$0")"/../../examples/demo/*.conf "$conf/"
sed -i 's/GraceTime=60/GraceTime=4/' "$conf/slurm.conf"
grep -q "GraceTime=4" "$conf/slurm.conf" || { echo "FAIL: no GraceTime in the demo's slurm.conf"; exit 1; }
start_cluster plan --conf "$conf/slurm.conf"
rm -rf "$conf"
cd "$state/work"

field() {  # field JOBID KEY: one value of scontrol show job -o
  scontrol -o show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1
}
wait_for() {  # wait_for JOBID KEY REGEX
  for _ in $(seq 1 300); do
    [[ "$(field "$1" "$2")" =~ ^($3)$ ]] && return 0
    sleep 0.2
  done
  fail "job $1: $2 is $(field "$1" "$2"), not $3"
}

# ---- a maintenance window now: sinfo says maint, scontrol IDLE+MAINT ----
scontrol create reservation ReservationName=now StartTime=now Duration=10 Nodes=node4 \
  Users=root Flags=MAINT > /dev/null || fail "create reservation now"
[ "$(sinfo -h -N -n node4 -o %t | head -1)" = maint ] || fail "sinfo: $(sinfo -h -N -n node4 -o %t)"
scontrol show node node4 | grep -q "State=IDLE+MAINT " || fail "show node: $(scontrol show node node4)"
scontrol delete ReservationName=now || fail "delete reservation now"

# ---- a maintenance window in an hour on node4: long jobs stay off it, short ones backfill ----
# It ends a minute after the wide job can (2 h from now), so the long job's earliest start is on
# the wide job's nodes whatever second the wide job started in.
scontrol create reservation ReservationName=maint StartTime=now+1hour Duration=61 Nodes=node4 \
  Users=root Flags=MAINT > /dev/null || fail "create reservation maint"
wide=$(sbatch --parsable -J wide -N3 --exclusive -t 2:00:00 --wrap "sleep 300")
wait_for "$wide" JobState RUNNING
long=$(sbatch --parsable -J long -N1 --exclusive -t 2:00:00 --wrap "sleep 300")
short=$(sbatch --parsable -J short -N1 --exclusive -t 30 --wrap "sleep 300")
wait_for "$short" JobState RUNNING
[ "$(field "$short" NodeList)" = node4 ] || fail "the short job runs on $(field "$short" NodeList)"
wait_for "$long" Reason Resources
start=$(squeue --start -h -j "$long" -o "%S %Y")
[[ "$start" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\ node[1-3]$ ]] || fail "squeue --start: '$start'"
scontrol show job "$long" | grep -q "SchedNodeList=node[1-3]" || fail "no SchedNodeList: $(scontrol show job "$long")"
[ "$(field "$long" StartTime)" != Unknown ] || fail "the long job has no StartTime"
scancel "$wide" "$long" "$short"
scontrol delete ReservationName=maint || fail "delete reservation maint"

# ---- preemption with grace: SIGTERM, checkpoint, requeue, resume ----
cat > train.sh <<'EOF'
#!/bin/bash
# Counts steps, resuming from its checkpoint; on SIGTERM saves the step reached and exits.
step=$(cat ckpt 2>/dev/null || echo 0)
echo "run ${SLURM_RESTART_COUNT:-0} resumes at $step" >> runs.log
trap 'echo "$step" > ckpt; date +%s > term.time; exit 0' TERM
if [ "${SLURM_RESTART_COUNT:-0}" -ge 1 ]; then echo "resumed from $step"; exit 0; fi
while true; do step=$((step + 1)); sleep 0.1; done
EOF
chmod +x train.sh
low=$(sbatch --parsable -J low -p preempt -N4 --exclusive -t 1:00:00 --signal=B:TERM@180 \
  -o low.out train.sh)
wait_for "$low" JobState RUNNING
sleep 1  # a few steps to checkpoint
high=$(sbatch --parsable -J high -p gpu -N1 --gres=gpu:8 -t 5 --wrap "sleep 2")
asked=$(date +%s)
wait_for "$high" JobState "RUNNING|COMPLETED"
[ -s term.time ] || fail "the preempted job never got SIGTERM"
[ "$(cat term.time)" -le $((asked + 2)) ] || fail "SIGTERM came at $(cat term.time), asked at $asked"
[ "$(cat ckpt)" -gt 0 ] || fail "no checkpoint: $(cat ckpt)"
wait_for "$low" JobState COMPLETED
[ "$(field "$low" Restarts)" = 1 ] || fail "Restarts=$(field "$low" Restarts)"
grep -qx "resumed from $(cat ckpt)" low.out || fail "the second run says: $(cat low.out)"
[ "$(cat runs.log)" = "$(printf 'run 0 resumes at 0\nrun 1 resumes at %s' "$(cat ckpt)")" ] ||
  fail "runs: $(cat runs.log)"
states=$(sacct -D -X -n -P -j "$low" -o State | tr '\n' ' ')
[ "$states" = "PREEMPTED COMPLETED " ] || fail "sacct -D: $states"
echo "PASS"
