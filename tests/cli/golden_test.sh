#!/bin/bash
# Golden outputs of squeue, sinfo, sacct, sprio and sshare on a local emulated cluster
# (`drover up` on tests/cli/golden/cluster, loopback, a temporary state directory, `drover down`
# at exit) brought into a known state: finished, failed, running, pending (Resources, BeginTime,
# a dependency never satisfied), held jobs, a finished and a held array, and a drained node
# (when scontrol is built). Times, dates and user names are masked with sed before comparing
# with tests/cli/golden/*.txt.
#
#   tests/cli/golden_test.sh DROVER [--update]     (--update rewrites the golden files)
set -euo pipefail
drover="$(realpath "$1")"
update="${2:-}"
here="$(cd "$(dirname "$0")" && pwd)"
golden="$here/golden"
bin="$(dirname "$drover")"
state="$(mktemp -d /tmp/drover_golden_XXXXXX)"
export XDG_STATE_HOME="$state/xdg"
export TZ=UTC
cleanup() {
  "$drover" down --state "$state/cluster" >/dev/null 2>&1 || true
  rm -rf "$state"
}
trap cleanup EXIT
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
die() {
  echo "FAIL: $*" >&2
  for log in "$state"/cluster/logs/*.log; do
    echo "--- $log" >&2
    tail -5 "$log" >&2
  done
  exit 1
}

mkdir -p "$state/work"
cd "$state/work"  # the jobs' output files land here
"$drover" up --conf "$golden/cluster/slurm.conf" --state "$state/cluster" >"$state/up.txt" ||
  die "drover up failed: $(cat "$state/up.txt")"
export DROVER_CONF="$state/cluster/slurm.conf"
unset SLURM_CONF
export PATH="$bin:$PATH"
me="$(id -un)"

# Waits up to 30 s until squeue's field (-o) for a job prints the expected text.
wait_for() {
  local job="$1" field="$2" want="$3" got=""
  for _ in $(seq 300); do
    got="$(squeue -h -t all -j "$job" -o "$field" 2>/dev/null | head -1)"
    [ "$got" = "$want" ] && return 0
    sleep 0.1
  done
  die "job $job: $field is '$got', expected '$want'"
}
submit() { sbatch --parsable "$@"; }

# ---------- the known state ----------
# The jobs' account: research, whoever runs the test (root's own default is root's account).
sacctmgr -i add account research >/dev/null || die "sacctmgr add account research failed"
sacctmgr -i add user "$me" account=research >/dev/null || true  # root: exit 1 if it exists
sacctmgr -i modify user "$me" set defaultaccount=research >/dev/null ||
  die "sacctmgr modify user $me failed"
finished=$(submit -J finished --wrap=true)
wait_for "$finished" %T COMPLETED
failed=$(submit -J failed --wrap="exit 3")
wait_for "$failed" %T FAILED
arraydone=$(submit -J arrdone -a 0-1 --wrap=true)
wait_for "${arraydone}_0" %T COMPLETED
wait_for "${arraydone}_1" %T COMPLETED
never=$(submit -J never -d "afterok:$failed" --wrap=true)
wait_for "$never" %r DependencyNeverSatisfied
runner=$(submit -J runner -N2 -t 30 --wrap="sleep 600")
wait_for "$runner" %T RUNNING
just=$(submit -J just --wrap=true)
wait_for "$just" %T COMPLETED
bigwait=$(submit -J bigwait -N3 --exclusive -t 10 --wrap=true)
wait_for "$bigwait" %r Resources
held=$(submit -J held -H -p long --wrap=true)
wait_for "$held" %r JobHeldUser
later=$(submit -J later -b now+1hour --wrap=true)
wait_for "$later" %r BeginTime
heldarray=$(submit -J arrheld -H -a 1-3 --wrap=true)
wait_for "${heldarray}_1" %r JobHeldUser

# ---------- checks that need no golden file ----------
squeue -h -t all -o "%i %T" | grep -qx "$just COMPLETED" || fail "squeue -t all does not list job $just that just finished"
squeue -h -o %i | grep -qx "$just" && fail "squeue (default states) lists job $just that finished"
[ "$(squeue -h -j "$never" -o %r)" = DependencyNeverSatisfied ] ||
  fail "job $never (afterok on failed job $failed) is not DependencyNeverSatisfied"
# Every Slurm-named command says "slurm 22.05.8 (drover X.Y.Z)": tools parse "slurm X.Y.Z".
version="slurm 22.05.8 ($("$drover" version))"
for command in squeue sinfo sacct scancel sprio sshare sbatch srun salloc scontrol; do
  for flag in --help --usage; do
    out="$("$command" $flag 2>&1)" || fail "$command $flag exited $?"
    [ -n "$out" ] || fail "$command $flag printed nothing"
  done
  out="$("$command" --version 2>&1)" || fail "$command --version exited $?"
  [ "$out" = "$version" ] || fail "$command --version printed '$out', not '$version'"
  [ "$("$command" -V 2>&1)" = "$version" ] || fail "$command -V differs from --version"
done

# ---------- golden outputs ----------
mask() {
  sed -E \
    -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}/YYYY-MM-DDTHH:MM:SS/g' \
    -e 's/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ 0-9]{2} [0-9:]{8} [0-9]{4}$/DATE/' \
    -e ':a' -e 's/(^|[ |])0:[0-9]{2}($|[ |])/\10:SS\2/' -e 'ta' \
    -e ':b' -e 's/(^|[ |])00:00:[0-9]{2}($|[ |])/\100:00:SS\2/' -e 'tb' |
    sed -E -e "s/ +\\b($me|root)\\b/ USER/g" -e "s/\\b($me|root)\\b +/USER /g" \
      -e "s/\\b($me|root)\\b/USER/g"
}
# sshare's usage grows while the runner runs: RawUsage and EffectvUsage of the default table,
# and RawUsage, NormUsage, EffectvUsage and LevelFS of -l -P, are masked, and so are the counts
# of TRESRunMins (time left of the running jobs); so is sprio -n's AGE.
mask_usage() {
  case "$1" in
  table) awk 'NR > 3 && length($0) >= 81 {
           $0 = substr($0, 1, 55) "      USAGE      #.######" substr($0, 81) } { print }' ;;
  age) awk 'NR > 2 && length($0) >= 47 { $0 = substr($0, 1, 37) "#.####### " substr($0, 48) }
           { print }' ;;
  parsable) awk -F'|' -v OFS='|' 'NR > 2 { $5 = "USAGE"; $6 = $7 = "#.######"; $9 = "#.######";
           gsub(/=[0-9]+/, "=N", $11) } { print }' ;;
  esac
}
compare() {  # NAME COMMAND...: the command's output (and exit code when not 0), masked
  local name="$1" out="$state/out/$1.txt" code=0
  shift
  mkdir -p "$state/out"
  {
    echo "\$ $*"
    "$@" 2>&1 || code=$?
    [ "$code" = 0 ] || echo "(exit $code)"
  } >"$out.raw"
  case "$name" in
  sshare_all) mask_usage table <"$out.raw" | mask >"$out" ;;
  sshare_long) mask_usage parsable <"$out.raw" | mask >"$out" ;;
  sprio_norm) mask_usage age <"$out.raw" | mask >"$out" ;;
  *) mask <"$out.raw" >"$out" ;;
  esac
if [ "$update" = --update ]; then
    cp "$out" "$golden/$name.txt"
  elif ! diff -u "$golden/$name.txt" "$out" >"$state/diff.txt" 2>&1; then
    fail "$name differs from tests/cli/golden/$name.txt:"
    cat "$state/diff.txt" >&2
  fi
}

compare squeue_default squeue
compare squeue_long squeue -l
compare squeue_format squeue -o "%.7i %.9P %.10j %.8u %.2t %.10M %.9l %.6D %.4C %10b %R"
compare squeue_format_narrow squeue -o "%3i|%4j|%.3T|%5r"
compare squeue_all squeue -t all
compare squeue_start squeue --start
compare squeue_noheader squeue -h -o "%i|%T|%r|%N"
compare squeue_jobs squeue -j "$runner,$held"
compare squeue_user squeue -u "$me" -t PD,R
compare squeue_array squeue -r -j "$heldarray"
compare sinfo_default sinfo
compare sinfo_nodes sinfo -N
compare sinfo_long sinfo -l
compare sinfo_reasons sinfo -R
compare sinfo_gres sinfo -o "%P %.5a %.10l %.6D %.6t %N %G"
compare sinfo_nodes_gres sinfo -N -o "%N %.4c %.8m %G %f %T"
compare sacct_default sacct
compare sacct_parsable sacct -P
compare sacct_fields sacct -o "JobID,JobName%12,State%12,ExitCode,Elapsed,NodeList%10,Start"
compare sacct_allocations sacct -X
compare sacct_array sacct -j "$arraydone" -o JobID,JobIDRaw,JobName,State,ExitCode
compare sprio_default sprio
compare sprio_long sprio -l
compare sprio_norm sprio -n
compare sprio_weights sprio -w
compare sprio_jobs sprio -j "$bigwait,$later"
compare sprio_user sprio -u "$me"
compare sprio_format sprio -o "%.8i %8r %.6Y %.6F %.5P %o"
compare sprio_nomatch sprio -j 999
compare sshare_all sshare -a
compare sshare_long sshare -a -l -P
compare sshare_parsable sshare -a -P -o Account,User,RawShares,NormShares,FairShare
compare sshare_widths sshare -n -o "Account%12,User%-10,RawShares%4"

# The options tools lean on: sinfo -t (usable nodes), -M's CLUSTER line, --noconvert, -O, -s.
cluster="$(sed -n 's/^ClusterName=//p' "$DROVER_CONF")"
[ "$(sinfo -h -t idle,mix -o '%P %D' | awk '{s += $2} END {print s}')" = "$(sinfo -h -N -t idle,mix -o %N | wc -l)" ] ||
  fail "sinfo -t idle,mix counts differ between -o %D and -N"
sinfo -h -t idle,mix -o "%t" | grep -qvE '^(idle|mix)$' && fail "sinfo -t idle,mix lists other states"
sinfo -t bogus >/dev/null 2>"$state/err" && fail "sinfo -t bogus succeeded"
grep -qx 'sinfo: error: Bad state string: "bogus"' "$state/err" || fail "sinfo -t bogus: $(cat "$state/err")"
[ "$(squeue -M "$cluster" --noconvert -o %i | head -1)" = "CLUSTER: $cluster" ] ||
  fail "squeue -M prints no CLUSTER line"
[ "$(sinfo -M all -h -o %P | head -1)" = "CLUSTER: $cluster" ] || fail "sinfo -M prints no CLUSTER line"
squeue -M elsewhere >/dev/null 2>&1 && fail "squeue -M elsewhere succeeded"
# -v's settings block resolves the cluster flags as Slurm's squeue does.
squeue -v --sibling -h -j "$runner" | grep -qx "federation  = true" || fail "squeue -v --sibling: federation not true"
squeue -v --sibling --local -h -j "$runner" | grep -qx "federation  = false" ||
  fail "squeue -v --sibling --local: --local does not override --federation"
squeue -v -M "$cluster" -h -j "$runner" | grep -qx "local       = true" || fail "squeue -v -M: local not true"
[ "$(squeue -h -j "$runner" -O jobid:10,state:.9)" = "$(printf '%-10s%9s' "$runner" RUNNING)" ] ||
  fail "squeue -O: '$(squeue -h -j "$runner" -O jobid:10,state:.9)'"
squeue -h -s -o "%i %j" | grep -qx "$runner.batch batch" || fail "squeue -s lists no $runner.batch"
squeue -j 999999 >/dev/null 2>"$state/err" && fail "squeue -j 999999 succeeded"
grep -qx 'slurm_load_jobs error: Invalid job id specified' "$state/err" ||
  fail "squeue -j 999999: $(cat "$state/err")"
squeue --yaml >"$state/yaml" || fail "squeue --yaml failed"
[ "$(sed -n 2p "$state/yaml")" = "meta:" ] || fail "squeue --yaml does not start with meta"

# A drained node: through scontrol, when it is built (someone else owns it).
if [ -x "$bin/scontrol" ]; then
  scontrol update NodeName=n4 State=DRAIN Reason="golden maintenance" >/dev/null ||
    fail "scontrol could not drain n4"
  compare sinfo_drained sinfo
  compare sinfo_drained_reasons sinfo -R
  compare sinfo_drained_nodes sinfo -N -l
else
  echo "SKIP: drained-node outputs ($bin/scontrol is not built)"
fi

# ---------- sacct's selection: the time window, states, names, job and step IDs ----------
# Each check prints what sacct answered when it fails.
expect() {  # expect WANT COMMAND...: stdout and stderr together, and the exit status
  local want="$1" got
  shift
  got="$("$@" 2>&1; echo "rc=$?")"
  [ "$got" = "$want" ] || fail "$* printed '$got', expected '$want'"
}
ids() { sacct -X -n -P -o JobID "$@" | sort | tr '\n' ' '; }
[ "$(ids --name finished)" = "$finished " ] || fail "sacct --name finished: $(ids --name finished)"
[ "$(ids --name=finished,failed)" = "$(printf '%s\n' "$finished" "$failed" | sort | tr '\n' ' ')" ] ||
  fail "sacct --name=finished,failed: $(ids --name=finished,failed)"
# -s alone: the window is now, so only what is running (or eligible and waiting) now. The window
# is inclusive and in whole seconds: job $just, which ended a moment ago, was still running in
# the second it ended, so the checks wait for the next second.
just_end=$(date -d "$(sacct -X -n -P -o End -j "$just")" +%s)
while [ "$(date +%s)" -le "$just_end" ]; do sleep 0.1; done
[ "$(ids -s R)" = "$runner " ] || fail "sacct -s R: $(ids -s R)"
[ "$(ids -s r,F)" = "$runner " ] || fail "sacct -s r,F (F ended before now): $(ids -s r,F)"
# Held jobs, a dependency and a future begin time are not eligible: only bigwait is pending.
[ "$(ids -s PD)" = "$bigwait " ] || fail "sacct -s PD: $(ids -s PD)"
[ "$(ids -s failed -S midnight -E now)" = "$failed " ] || fail "sacct -s failed -S midnight -E now: $(ids -s failed -S midnight -E now)"
[ "$(ids -S 2000-01-01 -E 2000-01-02T00:00:00)" = "" ] || fail "sacct with a window in 2000 lists jobs"
[ "$(ids -j "$held")" = "$held " ] || fail "sacct -j $held (never eligible) is not listed"
[ "$(ids)" = "$(ids -S midnight)" ] || fail "sacct's default window is not midnight-now"
[ "$(ids -j "${arraydone}_[0-1]")" = "${arraydone}_0 ${arraydone}_1 " ] || fail "sacct -j ${arraydone}_[0-1]: $(ids -j "${arraydone}_[0-1]")"
[ "$(sacct -j "$finished.batch" -n -P -o JobID)" = "$finished.batch" ] || fail "sacct -j $finished.batch: $(sacct -j "$finished.batch" -n -P -o JobID)"
[ "$(SACCT_FORMAT=JobID,State sacct -X -n -P -j "$failed")" = "$failed|FAILED" ] || fail "SACCT_FORMAT is not honoured"
[ "$(sacct --yaml -j "$failed" | head -1)" = "---" ] || fail "sacct --yaml does not start a YAML document"
expect "sacct: fatal: unrecognized job state value xx
rc=1" sacct -s xx
expect "sacct: fatal: Bad job/step specified: x1
rc=1" sacct -j x1
expect "Invalid time specification (pos=0): junk
rc=1" sacct -S junk
expect "sacct: error: Invalid field requested: \"Bogus\"
rc=1" sacct -o JobID,Bogus
expect "Slurm job completion is disabled
rc=1" sacct -c

if [ "$update" = --update ]; then
  echo "UPDATED $golden"
  exit 0
fi
[ "$failures" = 0 ] || {
  echo "$failures check(s) failed" >&2
  exit 1
}
echo "PASS"
