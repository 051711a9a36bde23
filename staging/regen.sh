#!/usr/bin/env bash
# Regenerates the committed references under pin v3 with the parked code (informed 2 and the
# reference grids' measures, commit CODE below), resuming from the cells already staged here.
# Usage (from the repository root, with `make install` done):
#   setsid nohup bash staging/regen.sh > /tmp/regen/log 2>&1 &
#   bash staging/regen.sh --save     # copy finished cells into staging/<grid>/cells (then commit)
#   JOBS=1 bash staging/regen.sh trlaplace_code trlaplace_code_public   # only these grids
# The 100-d grids need `bench embeddings fetch glove-6b-100d` once per machine (npm, ~2 min).
# Stop it with `kill -- -<PGID>` (its process group), never pkill: loky workers outlive pkill.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CODE=2d817f4bba4b1200b6c850c07600f2266345c20b    # the parked code; the commit after it on main (PARK in land.sh) reverts it
WT=/tmp/wt; OUT=/tmp/regen
# the committed references, regenerated and landed together (land.sh --go): landed on 2026-11-27
# (debates2016 news_outlets thesis_reference trlaplace trlaplace_rewrite tem quickstart)
GRIDS=""
# new references (issue 25: the code ablation, the 100-d repetitions), none on main yet: each
# lands on its own once complete, after the ones above (land.sh --new GRID)
NEW="trlaplace_rewrite_100d"
save() {
  for g in $GRIDS $NEW; do
    [ -d "$OUT/$g/cells" ] || continue
    mkdir -p "$ROOT/staging/$g/cells"
    for c in "$OUT/$g/cells"/*/; do
      h=$(basename "$c"); [ -f "$c/manifest.json" ] || continue
      # only cells this code computed (a results folder may hold older ones)
      grep -q "\"commit\": \"$CODE\"" "$c/manifest.json" || continue
      [ -d "$ROOT/staging/$g/cells/$h" ] || cp -r "$c" "$ROOT/staging/$g/cells/$h"
    done
    echo "$g: $(ls "$ROOT/staging/$g/cells" | wc -l) cells staged"
  done
}
if [ "${1:-}" = --save ]; then save; exit 0; fi
if [ $# -gt 0 ]; then GRIDS="$*"; else GRIDS="$GRIDS $NEW"; fi
[ -d "$WT" ] || git -C "$ROOT" worktree add --detach "$WT" "$CODE"
[ "$(git -C "$WT" rev-parse HEAD)" = "$CODE" ] || { echo "$WT is not at $CODE" >&2; exit 1; }
# the staged cells and this machine must share the pinned platform (staging/README.md)
here=$(cd "$WT" && PYTHONPATH="$WT" "$ROOT/.venv/bin/bench" platform | head -1 | cut -d: -f1)
case "$here" in cpu-pinned-*) ;; *) echo "not pinned here ($here): nothing run" >&2; exit 1;; esac
staged=$(grep -rhoE '"id": "cpu-[a-z0-9-]+"' "$ROOT"/staging/*/cells/*/manifest.json 2>/dev/null \
  | sort -u | sed 's/.*"\(cpu-[a-z0-9-]*\)"/\1/' || true)
for id in $staged; do
  [ "$id" = "$here" ] || { echo "staged cells on $id, this machine $here: nothing run" >&2; exit 1; }
done
mkdir -p "$OUT"
for g in $GRIDS; do
  mkdir -p "$OUT/$g/cells"
  if [ -d "$ROOT/staging/$g/cells" ]; then      # resume: the staged cells are not recomputed
    for c in "$ROOT/staging/$g/cells"/*/; do
      h=$(basename "$c"); [ -d "$OUT/$g/cells/$h" ] || cp -r "$c" "$OUT/$g/cells/$h"
    done
  fi
  echo "== $g $(date -u +%FT%TZ)"
  (cd "$WT" && PYTHONPATH="$WT" nice -n 10 "$ROOT/.venv/bin/bench" run "experiments/$g.yaml" \
      --results "$OUT/$g" --jobs "${JOBS:-2}" --no-mlflow)
  echo "== $g done $(date -u +%FT%TZ)"
done
