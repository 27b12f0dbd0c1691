#!/bin/bash
# Slurm's semantics that tools rely on, end to end on a local emulated cluster (drover up).
# Signals: a batch script that traps USR1 runs a step that traps it too. `scancel --signal=USR1`
# reaches the step and not the batch shell (the job ends COMPLETED, not FAILED by signal 10);
# `-b` reaches the shell alone; `-f` both. `--signal=USR1@secs` at submission reaches the steps,
# `B:USR1@secs` the shell. `scancel -s KILL` cancels the job. Then scancel's ids, filters,
# messages and exit codes, and SLURM_CPUS_PER_TASK whenever -c was given.
set -euo pipefail
drover="$1"
source "$(dirname "$0")/cluster.sh"
start_cluster semantics
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
echo "semantics: ok"
