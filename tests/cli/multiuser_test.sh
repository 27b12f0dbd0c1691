#!/bin/bash
# Several real users on one `drover up` cluster (run as root, as CI is; exits 77 = skipped
# otherwise): alice and bob are Unix accounts this test creates if they are missing (and removes
# again). Their commands cannot read the cluster's key, so each gets its credential from the
# local broker, which learns the uid from the kernel. alice cannot cancel, hold, update, requeue
# or (PrivateData=jobs) see bob's job; her job runs as her, with her groups; root can do it all.
# scontrol notify and srun --cpu-bind=verbose write only where alice herself may write.
set -euo pipefail
drover="$1"
root_dir="$2"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to create users"; exit 77; }
state="$(mktemp -d /tmp/drover_users_XXXXXX)"
chmod 755 "$state"
export XDG_STATE_HOME="$state/xdg"
created=()
cleanup() {
  "$drover" down --state "$state/cluster" >/dev/null 2>&1 || true
  for user in "${created[@]}"; do userdel -r "$user" >/dev/null 2>&1 || true; done
  getent group drovertest >/dev/null && [ -n "${created_group:-}" ] && groupdel drovertest
  rm -rf "$state"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; for log in "$state"/cluster/logs/*.log; do echo "--- $log"; tail -8 "$log"; done; exit 1; }

getent group drovertest >/dev/null || { groupadd drovertest; created_group=1; }
for user in alice bob; do
  if ! id "$user" >/dev/null 2>&1; then
    useradd --create-home --shell /bin/bash "$user"
    created+=("$user")
  fi
done
usermod -a -G drovertest alice

# The users' own copy of the commands (the build tree may not be readable by them).
mkdir -p "$state/bin"
cp "$drover" "$state/bin/drover"
for command in sbatch srun squeue scancel scontrol sacct; do ln -sf drover "$state/bin/$command"; done
chmod -R a+rx "$state/bin"

mkdir -p "$state/conf"
cp "$root_dir"/examples/demo/*.conf "$state/conf/"
printf "PrivateData=jobs\nTaskPlugin=task/affinity\n" >>"$state/conf/slurm.conf"
"$drover" up --conf "$state/conf/slurm.conf" --state "$state/cluster" >"$state/up.txt" ||
  fail "drover up: $(cat "$state/up.txt")"
conf="$state/cluster/slurm.conf"
[ "$(stat -c %a "$state/cluster/slurm.key")" = 600 ] || fail "the key is not mode 0600"

as() {  # as USER COMMAND ARGS...: run one of the commands as USER, in a directory of theirs
  local user="$1"
  shift
  (cd "$state/home_$user" && runuser -u "$user" -- env DROVER_CONF="$conf" PATH="$state/bin:/usr/bin:/bin" "$@")
}
for user in alice bob; do
  install -d -o "$user" "$state/home_$user"
done

printf '#!/bin/bash\nid -u; id -G | tr " " "\\n" | sort -n | tr "\\n" " "; echo; sleep 300\n' >"$state/job.sh"
chmod 755 "$state/job.sh"
alice_job=$(as alice sbatch --parsable -o "$state/home_alice/out.txt" "$state/job.sh") ||
  fail "alice could not submit"
bob_job=$(as bob sbatch --parsable -o "$state/home_bob/out.txt" "$state/job.sh") ||
  fail "bob could not submit"

# Her job runs as her, with her groups (drovertest among them).
# Both lines written (the first alone may be there already).
for _ in $(seq 1 200); do [ "$(wc -l < "$state/home_alice/out.txt" 2>/dev/null || echo 0)" -ge 2 ] && break; sleep 0.1; done
[ "$(sed -n 1p "$state/home_alice/out.txt")" = "$(id -u alice)" ] ||
  fail "alice's job ran as uid $(sed -n 1p "$state/home_alice/out.txt")"
expected_groups="$(id -G alice | tr ' ' '\n' | sort -n | tr '\n' ' ')"
[ "$(sed -n 2p "$state/home_alice/out.txt")" = "$expected_groups" ] ||
  fail "alice's job has groups '$(sed -n 2p "$state/home_alice/out.txt")', not '$expected_groups'"

# alice cannot act on bob's job.
as alice scancel "$bob_job" 2>"$state/cancel.txt" && fail "alice cancelled bob's job"
grep -q "Access/permission denied" "$state/cancel.txt" || fail "scancel said: $(cat "$state/cancel.txt")"
as alice scontrol hold "$bob_job" 2>/dev/null && fail "alice held bob's job"
as alice scontrol requeue "$bob_job" 2>/dev/null && fail "alice requeued bob's job"
as alice scontrol update JobId="$bob_job" TimeLimit=5 2>/dev/null && fail "alice updated bob's job"
as alice scontrol update NodeName=node1 State=DRAIN Reason=mine 2>/dev/null && fail "alice drained a node"
[ "$(as bob squeue -h -j "$bob_job" -o %T)" = RUNNING ] || fail "bob's job is not running after alice's tries"

# PrivateData=jobs: alice sees her job only; root sees both.
listed="$(as alice squeue -h -o %i)"
[ "$listed" = "$alice_job" ] || fail "alice's squeue listed: $listed"
[ "$(squeue_all=$(DROVER_CONF="$conf" "$drover" squeue -h -o %i | sort -n | tr '\n' ' '); echo "$squeue_all")" = "$alice_job $bob_job " ] ||
  fail "root does not see both jobs"

# A uid claimed in the request counts for nothing: alice's own commands cannot become root.
as alice scontrol update NodeName=node1 State=DRAIN Reason=x 2>"$state/drain.txt" && fail "alice drained a node"

# scontrol notify writes into the batch shell's stderr as the job's user: a job that points its
# descriptor 2 at a file only root may write (opened for reading) gets nothing written there,
# while an ordinary job's error file gets the line.
echo "root's file" >"$state/rootfile"
chmod 644 "$state/rootfile"
printf '#!/bin/bash\nexec 2<%s\necho started\nsleep 300\n' "$state/rootfile" >"$state/sneaky.sh"
chmod 755 "$state/sneaky.sh"
sneaky=$(as alice sbatch --parsable -o "$state/home_alice/sneaky.out" "$state/sneaky.sh") ||
  fail "alice could not submit the second job"
for _ in $(seq 1 200); do grep -q started "$state/home_alice/sneaky.out" 2>/dev/null && break; sleep 0.1; done
grep -q started "$state/home_alice/sneaky.out" || fail "alice's second job did not start"
# The controller passes the message on and answers at once, as slurmctld does; the agent's
# refusal is in the controller's log under DebugFlags=Agent.
DROVER_CONF="$conf" "$drover" scontrol setdebugflags +Agent || fail "setdebugflags +Agent"
DROVER_CONF="$conf" "$drover" scontrol notify "$sneaky" "into root's file" || fail "notify refused"
refusal="JobId=$sneaky .*cannot write to job $sneaky's stderr: Permission denied"
for _ in $(seq 1 100); do grep -q "$refusal" "$state/cluster/logs/ctld.log" && break; sleep 0.1; done
grep -q "$refusal" "$state/cluster/logs/ctld.log" ||
  fail "the agent did not refuse to write into root's file: $(tail -5 "$state/cluster/logs/ctld.log")"
[ "$(cat "$state/rootfile")" = "root's file" ] || fail "notify changed root's file: $(cat "$state/rootfile")"
DROVER_CONF="$conf" "$drover" scontrol notify "$alice_job" "hello alice" || fail "notify failed"
for _ in $(seq 1 100); do grep -qx "slurmstepd: error: hello alice" "$state/home_alice/out.txt" && break; sleep 0.1; done
grep -qx "slurmstepd: error: hello alice" "$state/home_alice/out.txt" ||
  fail "notify's line is not in alice's file: $(cat "$state/home_alice/out.txt")"

# srun --cpu-bind=verbose's lines are written by the task itself, as its user: into alice's own
# error file, and never through a link of hers to root's file (the task cannot open it at all).
as alice srun -n1 --cpu-bind=verbose,map_cpu:0 -e "$state/home_alice/bind.err" true ||
  fail "alice's srun --cpu-bind=verbose failed"
grep -Eq "^cpu-bind=MAP  - node[0-9], task  0  0 \[[0-9]+\]: mask 0x[0-9a-f]+ set$" \
  "$state/home_alice/bind.err" || fail "no cpu-bind line in alice's file: $(cat "$state/home_alice/bind.err")"
[ "$(stat -c %U "$state/home_alice/bind.err")" = alice ] || fail "alice's error file is not hers"
ln -s "$state/rootfile" "$state/home_alice/link"
as alice srun -n1 --cpu-bind=verbose,map_cpu:0 -e "$state/home_alice/link" true 2>/dev/null &&
  fail "alice's task wrote its stderr into root's file"
[ "$(cat "$state/rootfile")" = "root's file" ] || fail "--cpu-bind=verbose changed root's file"
DROVER_CONF="$conf" "$drover" scancel "$sneaky" || fail "root could not cancel alice's second job"

# root can do all of it.
DROVER_CONF="$conf" "$drover" scontrol hold "$bob_job" 2>/dev/null || true  # running: not held
DROVER_CONF="$conf" "$drover" scancel "$bob_job" || fail "root could not cancel bob's job"
DROVER_CONF="$conf" "$drover" scancel "$alice_job" || fail "root could not cancel alice's job"
echo "PASS"
