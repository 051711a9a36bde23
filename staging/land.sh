#!/usr/bin/env bash
# Lands the staged references on main once every grid in regen.sh is complete (staging/README.md):
# re-lands the parked code, moves the cells in, rebuilds each report and the findings block and
# checks each reference (reruns 2 cells). Run from the repository root of main, then run
# `make test`, update the tests that name committed cells' hashes, and commit everything at once.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"; cd "$ROOT"
BIN="$ROOT/.venv/bin"
GRIDS="$(sed -n 's/^GRIDS="\(.*\)"/\1/p' staging/regen.sh)"
for g in $GRIDS; do
  want=$(PYTHONPATH="$ROOT" "$BIN/bench" validate "experiments/$g.yaml" 2>/dev/null | sed -n "s/^grid '$g' ([^)]*): \([0-9]*\) cells.*/\1/p")
  have=$( (ls "staging/$g/cells" 2>/dev/null || true) | wc -l)
  echo "$g: $have staged of $want"
  [ "$have" = "$want" ] || incomplete=1
done
[ "${1:-}" = --go ] || { echo "dry run: pass --go to land (needs every grid complete)"; exit 0; }
[ -z "${incomplete:-}" ] || { echo "not every grid is complete: nothing landed" >&2; exit 1; }
PARK=4eff4a4    # the commit that parks the code regen.sh runs (staging/README.md)
git revert --no-edit "$PARK"
for g in $GRIDS; do
  rm -rf "results/reference/$g/cells"; mkdir -p "results/reference/$g"
  mv "staging/$g/cells" "results/reference/$g/cells"
  "$BIN/bench" report --results "results/reference/$g" --grid "$g"
done
"$BIN/python" - <<'PY'
from pathlib import Path
from bench.tools.findings import BEGIN, END, render
p = Path("docs/findings.md"); t = p.read_text(encoding="utf-8")
p.write_text(t[:t.index(BEGIN)] + render().rstrip("\n") + t[t.index(END) + len(END):], encoding="utf-8")
PY
for g in $GRIDS; do "$BIN/bench" reference check "$g" --rerun 2; done
