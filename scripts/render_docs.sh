#!/usr/bin/env bash
# Regenerates the README's sample output from a real report, with the tool itself:
#   docs/sample/run-h200.txt   `show REPORT` (the table `run` printed for that report, all rows)
#   docs/img/roofline-h200.svg `plot REPORT -o ...`
#   README.md                  the excerpt between <!-- sample-run:begin --> and <!-- sample-run:end -->
#                              (its N = 16384 forward rows as a 120-column terminal shows them) and the
#                              provenance line between <!-- sample-source:begin/end -->
# The report is a_00.json of tests/data/reports/h200_gate_2.tar.xz: one `run --pass fwd,bwd`
# with default options on an H200. Run it after a change to what `show` or `plot` print:
#   scripts/render_docs.sh [TOOL]      (default: build/nocuda/app/cuflash-roofline, else build/ci)
set -euo pipefail
cd "$(dirname "$0")/.."

tool="${1:-}"
if [ -z "$tool" ]; then
  for candidate in build/nocuda/app/cuflash-roofline build/ci/app/cuflash-roofline; do
    [ -x "$candidate" ] && tool="$candidate" && break
  done
fi
[ -n "$tool" ] && [ -x "$tool" ] || { echo "render_docs: no cuflash-roofline binary (build first, or pass its path)" >&2; exit 2; }

archive=tests/data/reports/h200_gate_2.tar.xz
member=h200_gate_2/a_00.json
# The commit that recorded the archive (the report's context carries no commit).
recorded_in=63bf5a3
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tar -xJf "$archive" -C "$work" "$member" h200_gate_2/gpu.txt
report="$work/$member"

mkdir -p docs/sample docs/img
root="$PWD"
tool="$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")"
# Run from the unpacked directory, so that the chart names the report by its member path alone.
# Not a terminal and no $COLUMNS: every column whole.
(cd "$work" && NO_COLOR=1 env -u COLUMNS "$tool" show "$member" >"$root/docs/sample/run-h200.txt" 2>/dev/null)
(cd "$work" && "$tool" plot "$member" -o "$root/docs/img/roofline-h200.svg" 2>/dev/null)

# The excerpt: what a terminal of 120 columns shows for the report's N = 16384 forward rows
# (the report with only those rows, through `show` with COLUMNS=120).
excerpt="$work/excerpt.txt"
python3 - "$report" "$work/excerpt.json" <<'EOF'
import json, sys
source, target = sys.argv[1:]
report = json.load(open(source))
report["rows"] = [r for r in report["rows"]
                  if r["workload"]["seq_len"] == 16384 and r["workload"]["pass"] == "fwd"]
json.dump(report, open(target, "w"))
EOF
(cd "$work" && NO_COLOR=1 COLUMNS=120 "$tool" show excerpt.json >"$excerpt" 2>/dev/null)

source_line="$work/source.txt"
python3 - "$report" "$work/h200_gate_2/gpu.txt" "$recorded_in" "$archive" "$member" >"$source_line" <<'EOF'
import json, sys, textwrap
report, gpu_txt, commit, archive, member = sys.argv[1:]
context = json.load(open(report))["context"]
device = context["device"]
driver = open(gpu_txt).readline().split(",")[1].strip()
print(textwrap.fill(f"Sample: `{member}` of `{archive}`, measured on an {device['name']} ({device['sm_count']} SMs, "
      f"CC {device['compute_capability']}, driver {driver}, CUDA {device['runtime_version']}) at "
      f"{context['time_utc']} by `cuflash-roofline run --pass fwd,bwd` (default options); the "
      f"recording is in commit {commit}. `scripts/render_docs.sh` regenerates the table and the chart "
      f"from it.", width=96, break_on_hyphens=False, break_long_words=False))
EOF

python3 - README.md "$excerpt" "$source_line" <<'EOF'
import sys
path, excerpt, source = sys.argv[1:]
text = open(path).read()
def splice(text, name, body):
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    i, j = text.index(begin) + len(begin), text.index(end)
    return text[:i] + "\n" + body + text[j:]
text = splice(text, "sample-run", "```text\n" + open(excerpt).read() + "```\n")
text = splice(text, "sample-source", open(source).read())
open(path, "w").write(text)
EOF
echo "render_docs: docs/sample/run-h200.txt, docs/img/roofline-h200.svg, README.md (with $tool)"
