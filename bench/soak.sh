#!/bin/bash
# A soak: mixed load on a local emulated cluster (`drover up`, the demo's four nodes) for
# SECONDS, then the checks. The load, one round after another until the time is up:
#   - sbatch of single jobs, arrays of 5, and jobs that run srun steps (every job appends one
#     line to a file named after its job ID: a job that ran twice has two);
#   - held jobs cancelled while they wait;
#   - queries after each round: squeue, sinfo, scontrol show job and node, sacct;
#   - a node drained and resumed in turn;
#   - the controller restarted (SIGTERM, then started again as drover up started it) halfway.
# Then it waits for the queue to drain and checks, printing each figure:
#   - every job sbatch accepted ended, as sacct says, none lost (arrays: all 5 tasks), and no job
#     ran twice or ran after it was cancelled;
#   - every query answered (those sent while the controller was down are counted apart);
#   - the controller's and the agents' open files and RSS at rest before the load and after it
#     (the controller's after its restart's half of the load).
# It exits 1 when a check fails.
#
#   bench/soak.sh [BIN_DIR] [SECONDS]      (default: build/bin, 3600)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "${1:-$root/build/bin}" && pwd)"
duration=${2:-3600}
# shellcheck source=bench/timing.sh
source "$root/bench/timing.sh"
bench_state soak
cd "$state"
mkdir -p runs
export PATH="$bin:$PATH"
"$bin/drover" up --state "$state/cluster" >up.txt 2>&1 || {
  cat up.txt
  exit 1
}
export DROVER_CONF="$state/cluster/slurm.conf"
unset SLURM_JOB_ID SLURM_JOBID

pid_of() { sed -n 's/^pid=//p' "$state/cluster/pids/$1"; }
agents() { ls "$state/cluster/pids" | grep -vx ctld; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
fds() { ls "/proc/$1/fd" | wc -l; }
over_agents() {  # over_agents FUNCTION: FUNCTION's figure summed over the agent processes
  local total=0
  for agent in $(agents); do total=$((total + $("$1" "$(pid_of "$agent")"))); done
  echo "$total"
}
failures=0
check() {  # check CONDITION-TEXT COMMAND...: runs COMMAND, counts and prints a failure
  local what="$1"
  shift
  if ! "$@"; then
    echo "FAILED: $what"
    failures=$((failures + 1))
  fi
}

cat >job.sh <<'JOB'
#!/bin/bash
echo "$SLURM_JOB_ID" >> "runs/$SLURM_JOB_ID"
sleep "$((RANDOM % 3))"
JOB
cat >steps.sh <<'JOB'
#!/bin/bash
echo "$SLURM_JOB_ID" >> "runs/$SLURM_JOB_ID"
srun -n2 true
srun -N1 hostname > /dev/null
JOB
nodes=($(sinfo -h -N -o %N | sort -u))
idle() {  # until every job has left the queue (at most 300 s)
  for _ in $(seq 600); do
    [ -z "$(squeue -h -o %i 2>/dev/null)" ] && return 0
    sleep 0.5
  done
  return 1
}
at_rest() {  # "ctld_fds ctld_rss_kib agents_fds agents_rss_kib"
  sleep 3  # the agents' reports and the controller's commits settle
  local ctld
  ctld=$(pid_of ctld)
  echo "$(fds "$ctld") $(rss_kib "$ctld") $(over_agents fds) $(over_agents rss_kib)"
}

# ---- warm-up, then the figures at rest before the load ----
for _ in 1 2 3; do sbatch -Q -o /dev/null job.sh >/dev/null; done
idle
read -r ctld_fds0 ctld_rss0 agent_fds0 agent_rss0 <<<"$(at_rest)"

# ---- the load ----
: >accepted
: >arrays
: >cancelled
queries=0 refused=0 while_down=0 rounds=0 drained=""
start=$(date +%s)
end=$((start + duration))
restart_at=$((start + duration / 2))
restarted=0
restart_seconds="-"
query() {  # one query; a failure counts, or counts apart while the controller is down
  queries=$((queries + 1))
  if ! "$@" >/dev/null 2>query.err; then
    if [ "$restarting" = 1 ]; then
      while_down=$((while_down + 1))
    else
      refused=$((refused + 1))
      echo "query failed: $* ($(head -1 query.err))"
    fi
  fi
}
restarting=0
while [ "$(date +%s)" -lt "$end" ]; do
  rounds=$((rounds + 1))
  if id=$(sbatch --parsable -o /dev/null job.sh 2>sbatch.err); then echo "$id" >>accepted; else
    echo "sbatch refused: $(head -1 sbatch.err)"
    failures=$((failures + 1))
  fi
  if ((rounds % 3 == 0)); then
    id=$(sbatch --parsable --array=1-5 -o /dev/null job.sh) && echo "$id" >>arrays
  fi
  if ((rounds % 4 == 0)); then
    id=$(sbatch --parsable -N2 -n2 -o /dev/null steps.sh) && echo "$id" >>accepted
  fi
  if ((rounds % 5 == 0)); then
    id=$(sbatch --parsable --hold -o /dev/null job.sh) && scancel "$id" && echo "$id" >>cancelled
  fi
  if ((rounds % 10 == 0)); then
    if [ -n "$drained" ]; then
      scontrol update NodeName="$drained" State=RESUME
      drained=""
    else
      drained=${nodes[$(((rounds / 10) % ${#nodes[@]}))]}
      scontrol update NodeName="$drained" State=DRAIN Reason=soak
    fi
  fi
  last=$(tail -1 accepted)
  query squeue
  query sinfo
  query scontrol show job "$last"
  query scontrol show node "${nodes[0]}"
  query sacct -j "$last"
  if [ "$restarted" = 0 ] && [ "$(date +%s)" -ge "$restart_at" ]; then
    # The controller stops (SIGTERM) and is started again as drover up started it.
    ctld=$(pid_of ctld)
    mapfile -t argv < <(tr '\0' '\n' <"/proc/$ctld/cmdline")
    restarting=1
    a=$(now)
    kill "$ctld"
    while kill -0 "$ctld" 2>/dev/null; do sleep 0.05; done
    setsid "${argv[@]}" >>"$state/cluster/logs/ctld.log" 2>&1 </dev/null &
    new=$!
    # drover down stops what pids/ctld names: the new process, with its start time.
    printf 'pid=%s\nstarted=%s\n' "$new" "$(awk '{ print $22 }' "/proc/$new/stat")" \
      >"$state/cluster/pids/ctld"
    query squeue  # refused until it answers: counted apart
    until scontrol ping >/dev/null 2>&1; do sleep 0.05; done
    b=$(now)
    restart_seconds=$(seconds "$a" "$b")
    restarting=0
    restarted=1
  fi
done
[ -n "$drained" ] && scontrol update NodeName="$drained" State=RESUME
loaded=$(($(date +%s) - start))
check "the queue drained within 300 s of the load's end" idle
read -r ctld_fds1 ctld_rss1 agent_fds1 agent_rss1 <<<"$(at_rest)"

# ---- the checks ----
declare -A state_of
while IFS='|' read -r id st; do state_of[$id]=$st; done < <(sacct -n -X -P -o JobID,State -S "$(date -d "@$((start - 60))" +%Y-%m-%dT%H:%M:%S)")
# Jobs cancelled while held never ran, so no time window selects them: asked for by ID.
if [ -s cancelled ]; then
  while IFS='|' read -r id st; do state_of[$id]=$st; done < <(sacct -n -X -P -o JobID,State -j "$(paste -sd, cancelled)")
fi
lost=0 twice=0 not_completed=0 after_cancel=0
while read -r id; do
  st=${state_of[$id]:-}
  if [ -z "$st" ]; then
    lost=$((lost + 1))
    echo "lost: job $id"
    continue
  fi
  [ "$st" = COMPLETED ] || {
    not_completed=$((not_completed + 1))
    echo "job $id ended $st: $(scontrol show job "$id" 2>&1 | grep -Eo '(Reason|ExitCode|BatchHost)=[^ ]*' | tr '\n' ' ')"
    cat "$state/cluster/logs/"*.log | grep -F "job $id" | head -5
  }
  lines=$(cat "runs/$id" 2>/dev/null | wc -l)
  [ "$lines" -le 1 ] || {
    twice=$((twice + 1))
    echo "job $id ran $lines times"
  }
done <accepted
tasks=0
while read -r id; do
  for t in 1 2 3 4 5; do
    st=${state_of[${id}_$t]:-}
    tasks=$((tasks + 1))
    [ -n "$st" ] || {
      lost=$((lost + 1))
      echo "lost: array task ${id}_$t"
    }
  done
done <arrays
while read -r id; do
  case "${state_of[$id]:-}" in CANCELLED*) ;; *)
    lost=$((lost + 1))
    echo "cancelled job $id: ${state_of[$id]:-not in sacct}"
    ;;
  esac
  [ ! -e "runs/$id" ] || {
    after_cancel=$((after_cancel + 1))
    echo "cancelled job $id ran"
  }
done <cancelled
# Array tasks ran once each: their files are named after their own job IDs.
for file in runs/*; do
  [ "$(wc -l <"$file")" -le 1 ] || {
    twice=$((twice + 1))
    echo "${file#runs/} ran $(wc -l <"$file") times"
  }
done

echo "load                      ${loaded} s, $rounds rounds"
echo "jobs accepted             $(wc -l <accepted) (+ $(wc -l <arrays) arrays of 5, $(wc -l <cancelled) cancelled while held)"
echo "lost / ran twice          $lost / $twice (not COMPLETED: $not_completed; cancelled yet ran: $after_cancel)"
echo "queries                   $queries, $refused refused, $while_down sent while the controller was down"
echo "controller restart        $restart_seconds s until it answered"
echo "controller open files     $ctld_fds0 before, $ctld_fds1 after"
echo "controller RSS            $((ctld_rss0 / 1024)) MiB before, $((ctld_rss1 / 1024)) MiB after"
echo "agents' open files        $agent_fds0 before, $agent_fds1 after"
echo "agents' RSS (all)         $((agent_rss0 / 1024)) MiB before, $((agent_rss1 / 1024)) MiB after"

check "no job lost" [ "$lost" = 0 ]
check "no job ran twice" [ "$twice" = 0 ]
check "every job completed" [ "$not_completed" = 0 ]
check "no cancelled job ran" [ "$after_cancel" = 0 ]
check "every query answered" [ "$refused" = 0 ]
check "the controller restarted" [ "$restarted" = 1 ]
# At rest a daemon holds the same files as before (a few of gRPC's may come and go).
check "the agents' open files flat ($agent_fds0 -> $agent_fds1)" [ "$agent_fds1" -le $((agent_fds0 + 8)) ]
check "the controller's open files flat ($ctld_fds0 -> $ctld_fds1)" [ "$ctld_fds1" -le $((ctld_fds0 + 8)) ]
# RSS: the allocator keeps some of what the load used; a leak grows with the load's length.
check "the agents' RSS flat" [ "$agent_rss1" -le $((agent_rss0 * 3 / 2 + 32768)) ]
check "the controller's RSS flat" [ "$ctld_rss1" -le $((ctld_rss0 * 3 / 2 + 65536)) ]
if [ "$failures" != 0 ]; then
  echo "soak: $failures check(s) failed"
  exit 1
fi
echo "soak: every check passed"
