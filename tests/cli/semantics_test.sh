#!/bin/bash
# Slurm's semantics that tools rely on, end to end on a local emulated cluster (drover up).
# Signals: a batch script that traps USR1 runs a step that traps it too. `scancel --signal=USR1`
# reaches the step and not the batch shell (the job ends COMPLETED, not FAILED by signal 10);
# `-b` reaches the shell alone; `-f` both. `--signal=USR1@secs` at submission reaches the steps,
# `B:USR1@secs` the shell. `scancel -s KILL` cancels the job. Then scancel's ids, filters,
# messages and exit codes, and SLURM_CPUS_PER_TASK whenever -c was given. The job's lifecycle:
# --mail-type runs MailProg (a script logging its arguments and environment) with Slurm's
# subject; --deadline ends a job that cannot finish in time DEADLINE; sacct's Flags and -F;
# afterok:N_T on one array task; -k/--no-kill keeps a 2-node job running when one of its agents
# dies (SlurmdTimeout=6 here), while a job without it ends NODE_FAIL.
set -euo pipefail
drover="$1"
source "$(dirname "$0")/cluster.sh"
conf="$(mktemp -d /tmp/drover_semantics_conf_XXXXXX)"
cp "$(dirname "$0")"/../../examples/demo/*.conf "$conf/"
echo "SlurmdTimeout=6" >> "$conf/slurm.conf"
start_cluster semantics --conf "$conf/slurm.conf"
rm -rf "$conf"
cd "$state/work"

wait_for() {  # FILE: until it exists (the step or the shell wrote it)
  for _ in $(seq 1 300); do
    [ -e "$1" ] && return 0
    sleep 0.1
  done
  fail "no $1"
}
wait_done() {  # JOBID: until it has left the running states; prints the state
  for _ in $(seq 1 300); do
    st=$(sacct -X -n -P -j "$1" -o State 2>/dev/null | head -1)
    case "$st" in PENDING|RUNNING|"") sleep 0.1 ;; *) echo "$st"; return 0 ;; esac
  done
  fail "job $1 did not end"
}

wait_mark() {  # JOBID WHO: until WHO's trap has left its mark
  for _ in $(seq 1 300); do
    grep -qx "$2" "marks.$1" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "job $1: no mark from the $2's trap"
}

# The step marks that its trap is set (ready), then both wait for `go`; each trap leaves a mark.
# The shell waits in short sleeps so that bash runs its trap promptly (bash runs a trap once the
# foreground command ends).
cat > trap.sh <<'SCRIPT'
#!/bin/bash
#SBATCH -o trap.%j.out
trap 'echo shell >> marks.$SLURM_JOB_ID' USR1
srun bash -c 'trap "echo step >> marks.$SLURM_JOB_ID" USR1
  touch ready.$SLURM_JOB_ID
  until [ -e go.$SLURM_JOB_ID ]; do sleep 0.1; done' &
until [ -e go.$SLURM_JOB_ID ]; do sleep 0.1; done
wait
echo end >> marks.$SLURM_JOB_ID
SCRIPT

# JOBID WHO...: once the job is ready, waits for the marks of WHO, lets the job end and prints
# the marks it left (sorted, once each, on one line). The job must end COMPLETED.
marks_of() {
  local id="$1" who st
  shift
  for who in "$@"; do wait_mark "$id" "$who"; done
  touch "go.$id"
  st=$(wait_done "$id")
  [ "$st" = COMPLETED ] || fail "job $id ended $st: $(sacct -j "$id"; cat "trap.$id.out")"
  sort -u "marks.$id" | tr '\n' ' '
}

# scancel OPTIONS... : signals a fresh job once it is ready.
signalled() {
  local id
  id=$(sbatch --parsable trap.sh)
  wait_for "ready.$id"
  scancel "$@" "$id"
  echo "$id"
}

id=$(signalled --signal=USR1)
got=$(marks_of "$id" step)
[ "$got" = "end step " ] || fail "scancel --signal=USR1: marks '$got', want the step's only"
id=$(signalled --signal=USR1 -b)
got=$(marks_of "$id" shell)
[ "$got" = "end shell " ] || fail "scancel -b: marks '$got', want the shell's only"
id=$(signalled -s USR1 --full)
got=$(marks_of "$id" shell step)
[ "$got" = "end shell step " ] || fail "scancel -f: marks '$got', want both"
id=$(signalled -s SIGUSR1 -b -f)
got=$(marks_of "$id" shell step)
[ "$got" = "end shell step " ] || fail "scancel -b -f: marks '$got', want both (-b ignored)"

# --signal at submission, due at once (within 58 s of a 1-minute limit).
id=$(sbatch --parsable -t 1 --signal=USR1@58 trap.sh)
got=$(marks_of "$id" step)
[ "$got" = "end step " ] || fail "--signal=USR1@58: marks '$got', want the step's only"
id=$(sbatch --parsable -t 1 --signal=B:USR1@58 trap.sh)
got=$(marks_of "$id" shell)
[ "$got" = "end shell " ] || fail "--signal=B:USR1@58: marks '$got', want the shell's only"

# SIGKILL to the job (not to its shell alone) cancels it.
id=$(signalled -s KILL)
case "$(wait_done "$id")" in CANCELLED*) ;; *) fail "scancel -s KILL: $(sacct -j "$id")" ;; esac

# scancel N.S signals that step alone; the job goes on.
cat > two_steps.sh <<'SCRIPT'
#!/bin/bash
#SBATCH -o two.%j.out
for s in 0 1; do
  srun -n1 --overlap bash -c "trap 'echo step$s >> marks.\$SLURM_JOB_ID' USR1
    touch ready$s.\$SLURM_JOB_ID
    until [ -e go.\$SLURM_JOB_ID ]; do sleep 0.1; done" &
done
until [ -e go.$SLURM_JOB_ID ]; do sleep 0.1; done
wait
SCRIPT
id=$(sbatch --parsable -n2 two_steps.sh)
wait_for "ready0.$id"
wait_for "ready1.$id"
# Which srun became step 1 is a race: signal step 1 and expect exactly one mark.
scancel -s USR1 "$id.1"
for _ in $(seq 1 300); do [ -s "marks.$id" ] && break; sleep 0.1; done
touch "go.$id"
[ "$(wait_done "$id")" = COMPLETED ] || fail "scancel N.S: job $id: $(sacct -j "$id")"
[ "$(wc -l < "marks.$id")" = 1 ] || fail "scancel $id.1: marks $(cat "marks.$id")"

# Ids and messages as Slurm's scancel prints them.
expect_error() {  # WANTED-STDERR-LINE COMMAND...: exit 1 and that line on stderr
  local want="$1" rc=0
  shift
  "$@" 2> err.txt || rc=$?
  [ "$rc" = 1 ] || fail "$*: exit $rc, not 1"
  grep -qxF "$want" err.txt || fail "$*: stderr '$(cat err.txt)', want '$want'"
}
expect_error "scancel: error: Invalid job id 12x" scancel 12x
expect_error "scancel: error: Invalid job id 0" scancel 0
expect_error "scancel: error: No job identification provided" scancel
expect_error "Unknown job signal: FOO" scancel -s FOO 5
expect_error "Invalid job state specified: bogus" scancel -t bogus
expect_error "scancel: error: Kill job error on job id 999999: Invalid job id specified" \
  scancel 999999
scancel -Q 999999 2> err.txt && fail "scancel -Q on a missing job exited 0"
[ ! -s err.txt ] || fail "scancel -Q printed: $(cat err.txt)"
expect_error "scancel: error: Kill job error on job id $id: Not a valid federated job" \
  scancel --sibling=other "$id"
# A filter that matches nothing is no error.
scancel -n no-such-name || fail "scancel -n no-such-name failed"
scancel --wckey=none || fail "scancel --wckey failed"

# Array forms: N_[1-2] cancels those tasks, N_3 that one, -i asks and 'n' keeps the job.
arr=$(sbatch --parsable --array=1-4 --wrap 'sleep 300' -o /dev/null)
for _ in $(seq 1 300); do
  [ "$(squeue -h -r -j "$arr" -t R | wc -l)" -ge 1 ] && break
  sleep 0.1
done
scancel "${arr}_[1-2]" "${arr}_3"
echo n | scancel -i "${arr}_4" > prompt.txt
grep -q "^Cancel job_id=${arr}_4 name=wrap partition=" prompt.txt ||
  fail "scancel -i prompt: $(cat prompt.txt)"
for t in 1 2 3; do
  st=$(wait_done "${arr}_$t")
  case "$st" in CANCELLED*) ;; *) fail "${arr}_$t ended $st" ;; esac
done
squeue -h -r -j "${arr}_4" | grep -q . || fail "scancel -i answered n, yet ${arr}_4 is gone"
scancel -v "${arr}_4" 2> err.txt
grep -qxF "scancel: Terminating job ${arr}_4" err.txt || fail "scancel -v: $(cat err.txt)"

# SLURM_CPUS_PER_TASK whenever -c was given (sbatch -c 1 too), and not otherwise.
id=$(sbatch --parsable -c 1 -o c1.out --wrap 'echo "cpt=${SLURM_CPUS_PER_TASK-unset}"')
id2=$(sbatch --parsable -o c0.out --wrap 'echo "cpt=${SLURM_CPUS_PER_TASK-unset}"')
wait_done "$id" > /dev/null
wait_done "$id2" > /dev/null
[ "$(cat c1.out)" = "cpt=1" ] || fail "sbatch -c 1: $(cat c1.out)"
[ "$(cat c0.out)" = "cpt=unset" ] || fail "sbatch without -c: $(cat c0.out)"
# --mail-type: MailProg runs with Slurm's arguments and SLURM_JOB_* variables (set by reconfigure).
cat > mail.sh <<'SCRIPT'
#!/bin/sh
printf '%s|%s|%s|%s|%s|%s\n' "$1" "$2" "$3" "$SLURM_JOB_ID" "$SLURM_JOB_MAIL_TYPE" \
  "$SLURM_JOB_STATE" >> "$(dirname "$0")/mail.log"
SCRIPT
chmod +x mail.sh
echo "MailProg=$PWD/mail.sh" >> "$DROVER_CONF"
scontrol reconfigure || fail "reconfigure with MailProg"
id=$(sbatch --parsable -J mailed --mail-type=BEGIN,END --mail-user=x@example.org -o /dev/null \
  --wrap 'exit 3')
[ "$(wait_done "$id")" = FAILED ] || fail "mailed job $id: $(sacct -j "$id")"
for _ in $(seq 1 300); do [ "$(wc -l < mail.log 2>/dev/null || echo 0)" -ge 2 ] && break; sleep 0.1; done
grep -qE "^-s\|Slurm Job_id=$id Name=mailed Began, Queued time 00:00:0[0-9]\|x@example.org\|$id\|Began\|RUNNING$" \
  mail.log || fail "no BEGIN mail: $(cat mail.log)"
grep -qE "^-s\|Slurm Job_id=$id Name=mailed Ended, Run time 00:00:0[0-9], FAILED, ExitCode 3\|x@example.org\|$id\|Ended\|FAILED$" \
  mail.log || fail "no END mail: $(cat mail.log)"
scontrol show job "$id" | grep -qx "   MailUser=x@example.org MailType=BEGIN,END" ||
  fail "scontrol show job: no MailUser line"

# --deadline: an hour's limit cannot end within a minute: the job ends DEADLINE at once.
id=$(sbatch --parsable -t 60 --deadline=now+60 -o /dev/null --wrap true)
[ "$(wait_done "$id")" = DEADLINE ] || fail "deadline job $id: $(sacct -j "$id")"
scontrol show job "$id" | grep -q "JobState=DEADLINE Reason=DeadLine " ||
  fail "scontrol show job: $(scontrol show job "$id")"
scontrol show job "$id" | grep -qE "Deadline=20[0-9-]+T[0-9:]+$" || fail "no Deadline= time"

# sacct's Flags: a job that started at its submission; -F selects by it.
id=$(sbatch --parsable -o /dev/null --wrap true)
wait_done "$id" > /dev/null
[ "$(sacct -X -n -P -j "$id" -o Flags)" = SchedSubmit ] || fail "sacct Flags: $(sacct -X -j "$id" -o JobID,Flags)"
[ "$(sacct -X -n -P -j "$id" -F SchedSubmit,SchedBackfill -o JobID)" = "$id" ] || fail "sacct -F"
[ -z "$(sacct -X -n -P -j "$id" --flags=schedmain -o JobID)" ] || fail "sacct --flags=schedmain"
sacct -F Sometimes > err.txt 2>&1 && fail "sacct -F Sometimes"

# afterok:N_T waits on that array task alone.
arr=$(sbatch --parsable --array=0-1 -o /dev/null --wrap 'exit $SLURM_ARRAY_TASK_ID')
ok=$(sbatch --parsable -d "afterok:${arr}_0" -o /dev/null --wrap true)
never=$(sbatch --parsable -d "afterok:${arr}_1" -o /dev/null --wrap true)
[ "$(wait_done "$ok")" = COMPLETED ] || fail "afterok:${arr}_0: $(sacct -j "$ok")"
[ "$(squeue -h -j "$never" -o %E)" = "afterok:${arr}_1" ] || fail "squeue %E: $(squeue -j "$never" -o %E)"
for _ in $(seq 1 300); do
  [ "$(squeue -h -j "$never" -o %r)" = DependencyNeverSatisfied ] && break
  sleep 0.1
done
[ "$(squeue -h -j "$never" -o %r)" = DependencyNeverSatisfied ] || fail "afterok:${arr}_1 after it failed"
scancel "$never"

# -k/--no-kill: node2's agent dies; the -k job runs on without it, the other ends NODE_FAIL.
cat > hold.sh <<'SCRIPT'
#!/bin/bash
until [ -e go.$SLURM_JOB_ID ]; do sleep 0.1; done
SCRIPT
kept=$(sbatch --parsable -N2 -w "node[1-2]" -k -o /dev/null hold.sh)
lost=$(sbatch --parsable -N2 -w "node[1-2]" --no-requeue -o /dev/null hold.sh)
for _ in $(seq 1 300); do
  [ "$(squeue -h -j "$kept,$lost" -t R | wc -l)" = 2 ] && break
  sleep 0.1
done
kill -9 "$(sed -n 's/^pid=//p' "$state/cluster/pids/node2")"
[ "$(wait_done "$lost")" = NODE_FAIL ] || fail "job $lost without -k: $(sacct -j "$lost")"
[ "$(squeue -h -j "$kept" -o %T:%N)" = RUNNING:node1 ] || fail "-k job: $(squeue -j "$kept")"
touch "go.$kept" "go.$lost"
[ "$(wait_done "$kept")" = COMPLETED ] || fail "-k job $kept: $(sacct -j "$kept")"
echo "semantics: ok"
