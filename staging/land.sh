#!/usr/bin/env bash
# Lands staged references on main (staging/README.md). Run from the repository root of main.
#   bash staging/land.sh              dry run: how complete each grid is
#   bash staging/land.sh --go         once every grid of GRIDS (regen.sh) is complete: re-lands the
#                                     parked code, moves their cells in, rebuilds each report and the
#                                     findings block and checks each reference (reruns 2 cells)
#   bash staging/land.sh --new GRID   after --go, once GRID (one of NEW in regen.sh) is complete:
#                                     the same for that new reference alone
# Then run `make test`, update what staging/README.md lists, and commit everything at once.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"; cd "$ROOT"
BIN="$ROOT/.venv/bin"
PARK=4eff4a4a93b82a8c37d4487898bc4f8f320713ff   # the commit that parks the code regen.sh runs
GRIDS="$(sed -n 's/^GRIDS="\(.*\)"/\1/p' staging/regen.sh)"
NEW="$(sed -n 's/^NEW="\(.*\)"/\1/p' staging/regen.sh)"
complete() {   # complete GRID...: print staged/expected per grid; fails unless all are complete
  local ok=0 g want have
  for g in "$@"; do
    want=$(PYTHONPATH="$ROOT" "$BIN/bench" validate "experiments/$g.yaml" 2>/dev/null \
      | sed -n "s/^grid '$g' ([^)]*): \([0-9]*\) cells.*/\1/p")
    have=$( (ls "staging/$g/cells" 2>/dev/null || true) | wc -l)
    echo "$g: $have staged of ${want:-?}"
    [ -n "$want" ] && [ "$have" = "$want" ] || ok=1
  done
  return $ok
}
# (not `git log | grep -q`: under pipefail, grep's early exit fails the pipeline with SIGPIPE)
landed() { [ -n "$(git log --format=%H --grep="This reverts commit $PARK")" ]; }
land() {       # land GRID...: move the staged cells in and build each report
  local g
  for g in "$@"; do
    rm -rf "results/reference/$g/cells"; mkdir -p "results/reference/$g"
    mv "staging/$g/cells" "results/reference/$g/cells"; rmdir "staging/$g" 2>/dev/null || true
    "$BIN/bench" report --results "results/reference/$g" --grid "$g"
  done
  "$BIN/python" - <<'PY'
from pathlib import Path
from bench.tools.findings import BEGIN, END, render
p = Path("docs/findings.md"); t = p.read_text(encoding="utf-8")
p.write_text(t[:t.index(BEGIN)] + render().rstrip("\n") + t[t.index(END) + len(END):], encoding="utf-8")
PY
  for g in "$@"; do "$BIN/bench" reference check "$g" --rerun 2; done
}
case "${1:-}" in
  --go)
    landed && { echo "the parked code is already re-landed: use --new GRID" >&2; exit 1; }
    complete $GRIDS || { echo "not every grid is complete: nothing landed" >&2; exit 1; }
    git revert --no-edit "$PARK"
    land $GRIDS ;;
  --new)
    g="${2:-}"
    case " $NEW " in *" $g "*) ;; *) echo "--new takes one of: $NEW" >&2; exit 1;; esac
    landed || { echo "land the regenerated references first (--go): $g was computed with the parked code" >&2; exit 1; }
    complete "$g" || { echo "$g is not complete: nothing landed" >&2; exit 1; }
    land "$g" ;;
  "")
    complete $GRIDS || true; complete $NEW || true
    echo "dry run: --go lands the first group once complete, --new GRID one of the others" ;;
  *) echo "usage: bash staging/land.sh [--go | --new GRID]" >&2; exit 1 ;;
esac
