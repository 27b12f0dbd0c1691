#!/bin/bash
# The REST API (drover restd) on a `drover up` cluster, driven with curl as portals drive
# slurmrestd: tokens from `scontrol token`, requests with X-SLURM-USER-NAME/-TOKEN. Run as root
# (as CI is; exits 77 = skipped otherwise): alice and bob are Unix accounts this test creates if
# they are missing (and removes again), and the server runs as nobody. A job submitted with
# alice's token runs as alice; bob's token cannot cancel it; a token for one user cannot be
# passed off as another's, forged or used after it expired; bad requests get Slurm's "errors".
set -euo pipefail
drover="$1"
root_dir="$2"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to create users"; exit 77; }
command -v curl >/dev/null || { echo "FAIL: curl is not installed (scripts/setup --tests)"; exit 1; }
state="$(mktemp -d /tmp/drover_rest_XXXXXX)"
chmod 755 "$state"
export XDG_STATE_HOME="$state/xdg"
created=()
restd_pid=""
cleanup() {
  [ -n "$restd_pid" ] && kill "$restd_pid" 2>/dev/null && wait "$restd_pid" 2>/dev/null
  "$drover" down --state "$state/cluster" >/dev/null 2>&1 || true
  for user in "${created[@]}"; do userdel -r "$user" >/dev/null 2>&1 || true; done
  rm -rf "$state"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  echo "--- restd"; tail -20 "$state/restd.err" 2>/dev/null || true
  for log in "$state"/cluster/logs/*.log; do echo "--- $log"; tail -8 "$log"; done
  exit 1
}

for user in alice bob; do
  if ! id "$user" >/dev/null 2>&1; then
    useradd --create-home --shell /bin/bash "$user"
    created+=("$user")
  fi
done

# Copies the users and nobody can run (the build tree may not be readable by them).
mkdir -p "$state/bin"
cp "$drover" "$(dirname "$drover")/drover-restd" "$state/bin/"
for command in sbatch squeue scancel scontrol sacct sinfo sacctmgr; do ln -sf drover "$state/bin/$command"; done
chmod -R a+rx "$state/bin"
export PATH="$state/bin:$PATH"
"$drover" up --conf "$root_dir/examples/demo/slurm.conf" --state "$state/cluster" >"$state/up.txt" ||
  fail "drover up: $(cat "$state/up.txt")"
export DROVER_CONF="$state/cluster/slurm.conf"
[ "$(stat -c %a "$state/cluster/jwt_hs256.key")" = 600 ] || fail "the JWT key is not mode 0600"

# The server: as nobody (it refuses root), on a port of its choosing.
if drover restd 127.0.0.1:0 >"$state/root.out" 2>&1; then fail "restd ran as root"; fi
grep -q "refusing to run as root" "$state/root.out" || fail "restd as root: $(cat "$state/root.out")"
drover restd -u nobody 127.0.0.1:0 >"$state/restd.out" 2>"$state/restd.err" &
restd_pid=$!
poll() { for _ in $(seq 100); do "$@" && return 0; sleep 0.1; done; "$@"; }
poll grep -q "listening on" "$state/restd.out" || fail "restd did not start"
url="http://$(sed -n 's/^drover restd: listening on //p' "$state/restd.out")"

token_of() { scontrol token username="$1" lifespan="${2:-600}" | sed -n 's/^SLURM_JWT=//p'; }
alice=$(token_of alice)
bob=$(token_of bob)
[ -n "$alice" ] && [ -n "$bob" ] || fail "scontrol token gave no token"
# A user gets a token for themself (through the broker), not for someone else.
runuser -u alice -- env DROVER_CONF="$DROVER_CONF" "$state/bin/scontrol" token | grep -q '^SLURM_JWT=' ||
  fail "alice could not get her own token"
if runuser -u alice -- env DROVER_CONF="$DROVER_CONF" "$state/bin/scontrol" token username=bob >"$state/o" 2>&1; then
  fail "alice got a token for bob"
fi
grep -q "only root or SlurmUser" "$state/o" || fail "alice's token for bob: $(cat "$state/o")"

# call USER TOKEN METHOD PATH [BODY]: the status code; the body is in $state/body.
call() {
  local args=(-s -o "$state/body" -w '%{http_code}' -X "$3")
  [ -n "$1" ] && args+=(-H "X-SLURM-USER-NAME: $1")
  [ -n "$2" ] && args+=(-H "X-SLURM-USER-TOKEN: $2")
  [ $# -ge 5 ] && args+=(-H "Content-Type: application/json" --data-binary "$5")
  curl "${args[@]}" "$url$4"
}
json() { python3 -c "import json,sys; d=json.load(open('$state/body')); print($1)"; }
expect() {  # expect CODE ERROR-TEXT USER TOKEN METHOD PATH [BODY]
  local code=$1 text=$2
  shift 2
  local got
  got=$(call "$@")
  [ "$got" = "$code" ] || fail "$3 $4: HTTP $got, expected $code: $(cat "$state/body")"
  if [ -n "$text" ]; then
    json 'd["errors"][0]["error"]' | grep -qF "$text" || fail "$3 $4: $(cat "$state/body")"
  fi
}

expect 200 "" alice "$alice" GET /slurm/v0.0.38/ping
[ "$(json 'd["pings"][0]["ping"]')" = UP ] || fail "ping: $(cat "$state/body")"
[ "$(json 'len(d["errors"])')" = 0 ] || fail "ping errors: $(cat "$state/body")"
expect 200 "" alice "$alice" GET /slurm/v0.0.38/diag
[ "$(json 'd["statistics"]["agent_thread_count"] > 0')" = True ] || fail "diag: $(cat "$state/body")"
# sdiag -r is for operators.
if runuser -u alice -- env DROVER_CONF="$DROVER_CONF" "$state/bin/drover" sdiag -r >"$state/o" 2>&1; then
  fail "alice reset the statistics"
fi
grep -q "Permission denied" "$state/o" || fail "alice's sdiag -r: $(cat "$state/o")"

# A job submitted with alice's token runs as alice.
install -d -o alice "$state/alice"
job_body=$(printf '{"script": "#!/bin/bash\\nid -un > %s/who.txt\\nsleep 300\\n", "job": {"name": "rest1", "environment": {"PATH": "/usr/bin:/bin"}, "current_working_directory": "%s", "time_limit": 10}}' "$state/alice" "$state/alice")
expect 200 "" alice "$alice" POST /slurm/v0.0.38/job/submit "$job_body"
job=$(json 'd["job_id"]')
[ "$(json 'd["step_id"]')" = BATCH ] || fail "submit: $(cat "$state/body")"
poll test -s "$state/alice/who.txt" || fail "job $job did not run"
[ "$(cat "$state/alice/who.txt")" = alice ] || fail "job $job ran as $(cat "$state/alice/who.txt")"
expect 200 "" alice "$alice" GET "/slurm/v0.0.38/job/$job"
[ "$(json 'd["jobs"][0]["user_name"]')" = alice ] || fail "job $job: $(cat "$state/body")"
[ "$(json 'd["jobs"][0]["job_state"]')" = RUNNING ] || fail "job $job: $(cat "$state/body")"
expect 200 "" bob "$bob" GET /slurm/v0.0.38/jobs
json '[j["job_id"] for j in d["jobs"]]' | grep -q "$job" || fail "jobs: $(cat "$state/body")"

# No request acts as another user: bob cannot cancel alice's job, nor pass his token off as
# hers, nor forge one, nor use one past its lifespan.
expect 403 "Access/permission denied" bob "$bob" DELETE "/slurm/v0.0.38/job/$job"
expect 401 "the token is bob's, not alice's" alice "$bob" GET /slurm/v0.0.38/jobs
forged=$(python3 -c "
import base64, json, sys
head, claims, sig = sys.argv[1].split('.')
c = json.loads(base64.urlsafe_b64decode(claims + '=' * (-len(claims) % 4)))
c['sun'] = 'alice'
print(head + '.' + base64.urlsafe_b64encode(json.dumps(c).encode()).decode().rstrip('=') + '.' + sig)" "$bob")
expect 401 "signature does not match" alice "$forged" GET /slurm/v0.0.38/jobs
short=$(token_of alice 1)
sleep 2
expect 401 "expired" alice "$short" GET /slurm/v0.0.38/jobs
expect 401 "no X-SLURM-USER-TOKEN" "" "" GET /slurm/v0.0.38/jobs
squeue -h -j "$job" -o %T | grep -q RUNNING || fail "job $job did not survive bob's requests"
# A portal's token (root's or SlurmUser's) acts for the user the request names, as in Slurm; the
# job it submits runs as that user.
portal=$(token_of root)
expect 200 "" bob "$portal" POST /slurm/v0.0.38/job/submit \
  '{"script": "#!/bin/bash\nid -un > /tmp/drover_rest_whoami.$SLURM_JOB_ID\n", "job": {"environment": {"PATH": "/usr/bin:/bin"}, "current_working_directory": "/tmp"}}'
proxied=$(json 'd["job_id"]')
poll test -s "/tmp/drover_rest_whoami.$proxied" || fail "the portal's job $proxied did not run"
[ "$(cat "/tmp/drover_rest_whoami.$proxied")" = bob ] ||
  fail "the portal's job ran as $(cat "/tmp/drover_rest_whoami.$proxied")"
rm -f "/tmp/drover_rest_whoami.$proxied"

# Bad requests say what is wrong, in Slurm's errors array.
expect 400 "not JSON" alice "$alice" POST /slurm/v0.0.38/job/submit '{"job": '
expect 400 'unknown job field "colour"' alice "$alice" POST /slurm/v0.0.38/job/submit \
  '{"script": "#!/bin/sh\n", "job": {"environment": {}, "colour": "red"}}'
expect 400 "no \"environment\"" alice "$alice" POST /slurm/v0.0.38/job/submit \
  '{"script": "#!/bin/sh\n", "job": {}}'
expect 404 "no such path" alice "$alice" GET /slurm/v0.0.38/nothing
expect 404 "Invalid job id" alice "$alice" GET /slurm/v0.0.38/job/999999
expect 400 "unknown query parameter 'colour'" alice "$alice" GET "/slurm/v0.0.38/jobs?colour=red"
expect 405 "is not served" alice "$alice" DELETE /slurm/v0.0.38/nodes
head -c 1100000 /dev/zero | tr '\0' ' ' >"$state/big.json"
code=$(curl -s -o "$state/body" -w '%{http_code}' -X POST -H "X-SLURM-USER-NAME: alice" \
  -H "X-SLURM-USER-TOKEN: $alice" --data-binary @"$state/big.json" "$url/slurm/v0.0.38/job/submit")
[ "$code" = 413 ] || fail "an oversized body: HTTP $code"
json 'd["errors"][0]["error"]' | grep -q "over" || fail "an oversized body: $(cat "$state/body")"
# A chunked body could bypass the bound: it is refused before it is read.
code=$(curl -s -o "$state/body" -w '%{http_code}' -X POST -H "X-SLURM-USER-NAME: alice" \
  -H "X-SLURM-USER-TOKEN: $alice" -H "Transfer-Encoding: chunked" --data-binary @"$state/big.json" \
  "$url/slurm/v0.0.38/job/submit")
[ "$code" = 411 ] || fail "a chunked body: HTTP $code"
expect 401 "not a user name" "al ice" "$alice" GET /slurm/v0.0.38/jobs
# Slurm's document writes some paths with a trailing slash; clients generated from it send them.
expect 200 "" alice "$alice" GET /slurm/v0.0.38/jobs/

# The cluster as sinfo sees it.
expect 200 "" alice "$alice" GET /slurm/v0.0.38/nodes
[ "$(json 'len(d["nodes"])')" = "$(sinfo -h -N -o %N | sort -u | wc -l)" ] ||
  fail "nodes: $(json 'len(d["nodes"])') against sinfo's $(sinfo -h -N -o %N | sort -u | wc -l)"
first_node=$(sinfo -h -N -o %N | head -1)
expect 200 "" alice "$alice" GET "/slurm/v0.0.38/node/$first_node"
[ "$(json 'd["nodes"][0]["name"]')" = "$first_node" ] || fail "node: $(cat "$state/body")"
expect 200 "" alice "$alice" GET /slurm/v0.0.38/partitions
[ "$(json '" ".join(sorted(p["name"] for p in d["partitions"]))')" = \
  "$(sinfo -h -o %R | sort -u | tr '\n' ' ' | sed 's/ $//')" ] || fail "partitions: $(cat "$state/body")"
expect 200 "" alice "$alice" GET /slurm/v0.0.38/reservations

# Job updates (POST job/{id}, scontrol update job's fields): alice's own, not bob's; a user may
# shorten a time limit, not lengthen it.
expect 403 "" bob "$bob" POST "/slurm/v0.0.38/job/$job" '{"comment": "bob was here"}'
expect 200 "" alice "$alice" POST "/slurm/v0.0.38/job/$job" '{"time_limit": 5, "comment": "via REST"}'
scontrol show job "$job" | grep -q "TimeLimit=00:05:00" || fail "update: $(scontrol show job "$job" | grep TimeLimit)"
scontrol show job "$job" | grep -q "Comment=via REST" || fail "update: no comment"
expect 400 'unknown field "user_id"' alice "$alice" POST "/slurm/v0.0.38/job/$job" '{"user_id": 0}'
expect 400 "takes minutes" alice "$alice" POST "/slurm/v0.0.38/job/$job" '{"time_limit": 0}'
expect 400 "Invalid job id" alice "$alice" POST /slurm/v0.0.38/job/x1 '{"comment": "x"}'

# Accounting: the associations and the QOS, as sacctmgr knows them.
sacctmgr -i add account restacct >/dev/null || fail "sacctmgr add account"
sacctmgr -i add user alice account=restacct maxjobs=7 >/dev/null || fail "sacctmgr add user"
expect 200 "" alice "$alice" GET "/slurmdb/v0.0.38/associations?account=restacct"
[ "$(json '[(a["user"], a["max"]["jobs"]["per"]["count"]) for a in d["associations"] if a["user"]]')" =   "[('alice', 7)]" ] || fail "associations: $(cat "$state/body")"
expect 200 "" alice "$alice" GET "/slurmdb/v0.0.38/association?account=restacct&cluster=$(scontrol show config | sed -n 's/^ClusterName *= *//p')&user=alice"
[ "$(json 'len(d["associations"])')" = 1 ] || fail "association: $(cat "$state/body")"
expect 400 "give account= and cluster=" alice "$alice" GET "/slurmdb/v0.0.38/association?user=alice"
expect 200 "" alice "$alice" GET /slurmdb/v0.0.38/qos
json '[q["name"] for q in d["qos"]]' | grep -q normal || fail "qos: $(cat "$state/body")"
expect 200 "" alice "$alice" GET /slurmdb/v0.0.38/qos/normal
expect 404 "QOS nosuch not found" alice "$alice" GET /slurmdb/v0.0.38/qos/nosuch

# alice cancels her own job; it is in the history as cancelled.
expect 200 "" alice "$alice" DELETE "/slurm/v0.0.38/job/$job"
poll bash -c "! squeue -h -j $job -o %T | grep -q ." || fail "job $job was not cancelled"
expect 200 "" alice "$alice" GET "/slurmdb/v0.0.38/job/$job"
json 'd["jobs"][0]["state"]["current"]' | grep -q CANCELLED || fail "history: $(cat "$state/body")"
expect 200 "" alice "$alice" GET "/slurmdb/v0.0.38/jobs?users=alice"
json '[j["job_id"] for j in d["jobs"]]' | grep -q "$job" || fail "history: $(cat "$state/body")"

# The OpenAPI document lists every path served.
code=$(curl -s -o "$state/body" -w '%{http_code}' "$url/openapi/v3")
[ "$code" = 200 ] || fail "openapi: HTTP $code"
for path in /slurm/v0.0.38/ping /slurm/v0.0.38/job/submit /slurmdb/v0.0.38/jobs; do
  json "d['paths']['$path']" >/dev/null || fail "openapi lacks $path"
done
grep -q "DELETE /slurm/v0.0.38/job/$job user=alice 200" "$state/restd.err" ||
  fail "restd logged no request line"
# A UNIX socket (unix:/PATH), as slurmrestd listens on one: alice reaches it with her token.
kill "$restd_pid" && wait "$restd_pid" 2>/dev/null || true
restd_pid=""
install -d -m 755 -o nobody "$state/sock"  # the server removes its socket at the end
drover restd -u nobody "unix:$state/sock/rest.sock" >"$state/restd.out" 2>"$state/restd.err" &
restd_pid=$!
poll grep -q "listening on unix:" "$state/restd.out" || fail "restd did not listen on the socket"
code=$(runuser -u alice -- curl -s -o /dev/null -w '%{http_code}' --unix-socket "$state/sock/rest.sock" \
  -H "X-SLURM-USER-NAME: alice" -H "X-SLURM-USER-TOKEN: $alice" http://localhost/slurm/v0.0.38/ping)
[ "$code" = 200 ] || fail "alice's ping over the socket: HTTP $code"
if drover restd -u nobody "unix:$state/sock/rest.sock" >"$state/o" 2>&1; then
  fail "a second restd took the live socket"
fi
grep -q "another server listens there" "$state/o" || fail "second restd: $(cat "$state/o")"
kill "$restd_pid" && wait "$restd_pid" 2>/dev/null || true
restd_pid=""
[ ! -e "$state/sock/rest.sock" ] || fail "restd left its socket behind"
echo "PASS"
