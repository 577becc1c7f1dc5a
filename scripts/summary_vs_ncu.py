#!/usr/bin/env python3
"""The summary by kernel group (`show --view summary`) of a profile, against the same summary
with Nsight Compute's times: do the two give each group the same share of the GPU time?

    python3 scripts/summary_vs_ncu.py TOOL PROFILE.json NCU.csv [--top N] [--group-by KEY]

TOOL: the cuflash-roofline binary. PROFILE.json and NCU.csv as for profile_vs_ncu.py (the same
program, every kernel). Launches are paired as there; each paired row of the profile gets ncu's
`gpu__time_duration` (summed over a graph launch's kernels) in a copy of the report, and both
reports go through the tool's own grouping, so the groups are the same by construction and
only the times differ. Prints both summaries' top N groups (default 10) side by side with the
share difference in percentage points, and the largest difference.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_vs_ncu import load_other, our_launches, pair  # noqa: E402


def summary(tool, report, top, group_by):
    """{group: share %} and the group order of `show --view summary`."""
    text = subprocess.run([tool, "-q", "show", "--view", "summary", "--top", str(top),
                           "--group-by", group_by, report], check=True, capture_output=True,
                          text=True).stdout.splitlines()
    header = next(i for i, l in enumerate(text) if l.startswith("time %"))
    kernel_at = text[header].index("kernel")
    shares, order = {}, []
    for line in text[header + 1:]:
        if not line.strip().endswith("%") and "%" not in line[:8]:
            break
        share = float(line.split()[0].rstrip("%"))
        name = line[kernel_at:].strip()
        shares[name] = share
        order.append(name)
    return shares, order


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("tool")
    p.add_argument("profile")
    p.add_argument("ncu")
    p.add_argument("--top", type=int, default=10)
    p.add_argument("--group-by", default="functor")
    a = p.parse_args()
    report = json.load(open(a.profile))
    pairs = pair(our_launches(a.profile), load_other(a.ncu))
    paired = {i: ref for i, _, ref, _ in pairs}
    rows = []
    for i, row in enumerate(report["rows"]):
        if i not in paired:
            continue  # unpaired rows leave both summaries
        rows.append(row)
    ours_report = dict(report, rows=rows)
    ref_rows = []
    for i, row in enumerate(report["rows"]):
        if i in paired:
            r = json.loads(json.dumps(row))
            t = paired[i][0]
            r["counters"]["gpu_time_seconds"] = t
            r["timing"].update(median_seconds=t, min_seconds=t, max_seconds=t,
                               samples_seconds=[t], relative_spread=0.0, rounds=1)
            ref_rows.append(r)
    ref_report = dict(report, rows=ref_rows)
    with tempfile.TemporaryDirectory() as d:
        ours_path, ref_path = os.path.join(d, "ours.json"), os.path.join(d, "ncu.json")
        json.dump(ours_report, open(ours_path, "w"))
        json.dump(ref_report, open(ref_path, "w"))
        ours, order = summary(a.tool, ours_path, 0, a.group_by)
        ref, ref_order = summary(a.tool, ref_path, 0, a.group_by)
    print(f"{len(rows)} paired launches of {len(report['rows'])}; groups by {a.group_by}")
    print(f"{'ours %':>7} {'ncu %':>7} {'apart':>7}  group (ncu's top {a.top})")
    worst = 0.0
    for name in ref_order[:a.top]:
        o, r = ours.get(name, 0.0), ref[name]
        worst = max(worst, abs(o - r))
        print(f"{o:7.2f} {r:7.2f} {o - r:+7.2f}  {name[:90]}")
    print(f"largest share difference among ncu's top {a.top} groups: {worst:.2f} points")


if __name__ == "__main__":
    main()
