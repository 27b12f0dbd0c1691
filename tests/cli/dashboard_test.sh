#!/bin/bash
# The web dashboard served by the controller, tested in a real headless Chromium
# (dashboard_test.py): a `drover up` cluster with running, pending and held jobs, a drained node
# and a reservation. As root (as CI is) it also makes a Unix user, alice, whose token gets the
# read-only dashboard; otherwise that part is left out. Screenshots go to
# build/dashboard-screenshots (DASHBOARD_SCREENSHOTS overrides).
set -euo pipefail
drover="$(realpath "$1")"
root_dir="$(cd "$2" && pwd)"
shots="${DASHBOARD_SCREENSHOTS:-$(dirname "$(dirname "$drover")")/dashboard-screenshots}"
for need in /usr/bin/chromium /usr/bin/chromedriver; do
  [ -x "$need" ] || { echo "FAIL: $need is missing (scripts/setup --tests installs it)"; exit 1; }
done
/usr/bin/python3 -c "import selenium" 2>/dev/null ||
  { echo "FAIL: python3-selenium is missing (scripts/setup --tests installs it)"; exit 1; }
state="$(mktemp -d /tmp/drover_dashboard_XXXXXX)"
chmod 755 "$state"
export XDG_STATE_HOME="$state/xdg"
created=()
cleanup() {
  "$drover" down --state "$state/cluster" >/dev/null 2>&1 || true
  for user in "${created[@]}"; do userdel -r "$user" >/dev/null 2>&1 || true; done
  rm -rf "$state"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  for log in "$state"/cluster/logs/*.log; do echo "--- $log"; tail -8 "$log"; done
  exit 1
}

bin="$(dirname "$drover")"
export PATH="$bin:$PATH"
"$drover" up --conf "$root_dir/examples/demo/slurm.conf" --state "$state/cluster" >"$state/up.txt" ||
  fail "drover up: $(cat "$state/up.txt")"
export DROVER_CONF="$state/cluster/slurm.conf"
url="http://127.0.0.1:$(cat "$state/cluster/http.port")"

cd "$state"
sacctmgr -i add account ml >/dev/null || fail "sacctmgr add account"
sacctmgr -i add user root account=ml >/dev/null || fail "sacctmgr add user"
sbatch -N1 -G 2 -A ml --wrap "sleep 600" >/dev/null
sbatch -N2 -G 16 --exclusive -J big --wrap "sleep 600" >/dev/null
sbatch -N4 --exclusive -J waits --wrap "true" >/dev/null
sbatch -H -J held --wrap "true" >/dev/null
scontrol update nodename=node2 state=drain reason="bad fan" >/dev/null
scontrol create reservation reservationname=maint starttime=now+1hour duration=2:00:00 \
  nodes=node1 users=root flags=maint >/dev/null
for _ in $(seq 100); do
  [ "$(squeue -h -t R | wc -l)" -ge 2 ] && break
  sleep 0.1
done
[ "$(squeue -h -t R | wc -l)" -ge 2 ] || fail "the jobs did not start: $(squeue)"

export ADMIN_TOKEN DROVER_BIN="$bin"
ADMIN_TOKEN=$(scontrol token lifespan=900 | sed -n 's/^SLURM_JWT=//p')
[ -n "$ADMIN_TOKEN" ] || fail "scontrol token gave no token"
if [ "$(id -u)" = 0 ]; then
  if ! id alice >/dev/null 2>&1; then
    useradd --create-home --shell /bin/bash alice
    created+=(alice)
  fi
  export USER_TOKEN
  USER_TOKEN=$(scontrol token username=alice lifespan=900 | sed -n 's/^SLURM_JWT=//p')
else
  echo "note: not root: the read-only user's part is left out"
fi
/usr/bin/python3 "$root_dir/tests/cli/dashboard_test.py" "$url" "$shots" || fail "the browser test failed"
echo "screenshots in $shots"
