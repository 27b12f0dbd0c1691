#!/bin/bash
# The soak's short version: bench/soak.sh (an hour there) for 60 s of mixed load — submissions,
# arrays, steps, cancels, queries, drains and resumes, a controller restart halfway — then its
# checks: no job lost or run twice, every query answered, open files and RSS flat at rest.
set -euo pipefail
drover="$1"
exec bash "$(dirname "$0")/../../bench/soak.sh" "$(dirname "$drover")" "${SOAK_SECONDS:-60}"
