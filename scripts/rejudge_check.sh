#!/usr/bin/env bash
# Does a change leave the verdicts alone? Re-judges saved reports with two builds of the tool
# and says, per report and view, whether their output is byte-identical.
#
#   scripts/rejudge_check.sh OLD_TOOL NEW_TOOL REPORT.json...
#
# Views: `show --view table --wide`, `--view summary`, `--csv -` and `--json -` (each report is
# re-judged from its recorded counters and predictions, so a change that moves no verdict prints
# `same` everywhere). Build the old tool from a worktree of the base commit (`git worktree add
# /tmp/base REV; cmake --preset nocuda -B /tmp/base/build -S /tmp/base; cmake --build
# /tmp/base/build --target cuflash-roofline`). Exit 0 when every view is the same, 1 otherwise.
set -u -o pipefail
[ $# -ge 3 ] || { sed -n '2,12p' "$0"; exit 2; }
old=$1 new=$2
shift 2
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
status=0
for report in "$@"; do
  for view in table summary csv json; do
    case $view in
      table) args=(--view table --wide) ;;
      summary) args=(--view summary) ;;
      csv) args=(--csv -) ;;
      json) args=(--json -) ;;
    esac
    "$old" show "$report" "${args[@]}" >"$tmp/old" 2>&1
    "$new" show "$report" "${args[@]}" >"$tmp/new" 2>&1
    if cmp -s "$tmp/old" "$tmp/new"; then
      result=same
    else
      result="DIFFERS in $(diff "$tmp/old" "$tmp/new" | grep -c '^[<>]') lines"
      status=1
    fi
    echo "$report $view: $result ($(wc -l <"$tmp/new") lines)"
  done
done
exit $status
