#!/usr/bin/env bash
# Golden-output test of `drover config check`: each example's summary, and a broken
# configuration's errors and exit code, compared with files under tests/cli/golden.
# Usage: config_check_test.sh DROVER_BINARY SOURCE_DIR [--update]
set -uo pipefail
drover=$1
src=$2
update=${3:-}
cd "$src"
failures=0

check() {  # name expected_rc command...
  local name=$1 expected_rc=$2
  shift 2
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [ "$update" = "--update" ]; then
    printf '%s\n' "$out" >"tests/cli/golden/$name.txt"
  fi
  if [ "$rc" -ne "$expected_rc" ]; then
    echo "FAIL $name: exit code $rc, expected $expected_rc"
    failures=$((failures + 1))
  fi
  if ! diff -u "tests/cli/golden/$name.txt" <(printf '%s\n' "$out"); then
    echo "FAIL $name: output differs from tests/cli/golden/$name.txt (above)"
    failures=$((failures + 1))
  fi
}

for example in demo h100-128 nvl72-blocks; do
  check "config_check_$example" 0 "$drover" config check --conf "examples/$example/slurm.conf"
done
check config_check_bad 1 "$drover" config check --conf tests/cli/bad/slurm.conf
SLURM_CONF=examples/demo/slurm.conf check config_check_env 0 "$drover" config check
check config_check_missing 1 "$drover" config check --conf /nonexistent/slurm.conf
check config_usage 2 "$drover" config
check unknown_command 2 "$drover" frobnicate

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "config check golden outputs match"
