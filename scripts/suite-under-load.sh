#!/usr/bin/env bash
# The suite on a busy machine: `npm test` twice beside a CPU load of the machine's size
# (`stress-ng --cpu N`, N its cores; Debian's `stress-ng` package), then each run's result
# and time. Both must pass. Takes about 26 minutes; run it on a machine nobody else needs
# meanwhile: `bash scripts/suite-under-load.sh`.
set -uo pipefail
cd "$(dirname "$0")/.."
command -v stress-ng >/dev/null || {
  echo "stress-ng is not installed (apt-get install stress-ng)" >&2
  exit 2
}
cores=$(nproc)
stress-ng --cpu "$cores" --quiet &
stress=$!
# Ours alone, whatever ends this script.
trap 'kill "$stress" 2>/dev/null; wait "$stress" 2>/dev/null' EXIT
echo "== stress-ng --cpu $cores (pid $stress) beside two runs of npm test"
results=()
failed=0
for run in 1 2; do
  started=$SECONDS
  npm test
  code=$?
  ((code == 0)) || failed=1
  results+=("run $run: exit $code in $((SECONDS - started)) s, load $(cut -d' ' -f1-3 /proc/loadavg)")
done
echo "== npm test beside stress-ng --cpu $cores"
printf '%s\n' "${results[@]}"
exit "$failed"
