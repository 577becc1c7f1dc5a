#!/usr/bin/env python3
"""Does a launch get the same advice under every counter set? Re-judges saved `profile` reports
of one program with the tool's current analysis and compares each launch's lever between them.

    python3 scripts/advice_sets.py TOOL REFERENCE.json OTHER.json...

TOOL: the cuflash-roofline binary. REFERENCE.json: a report of the program under one counter set
(e.g. --counter-set full); OTHER.json: reports of the same deterministic program under others
(or in other runs). Launches pair by launch index and node position, and only when their kernel
names agree. Prints, for each OTHER, how many launches got the reference's lever and the most
common pairs that did not; and, for every report, how many launches' gains (recorded in the
file, and as judged now) exceed the launch's time over the GPU's launch floor (the spec's
launch_floor_us; node_floor_us for a graph node), which no kernel can beat. Asserts nothing.
"""
import collections
import json
import os
import subprocess
import sys
import tempfile


def judged(tool, path):
    """The report's rows as the tool judges them now."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "judged.json")
        subprocess.run([tool, "show", path, "--json", out, "-q"], check=True,
                       stdout=subprocess.DEVNULL)
        return json.load(open(out))


def beyond_floor(report):
    """(launches with advice, those whose gain exceeds time / launch floor; a graph node's floor
    is its spec's node floor: its time is its execution alone)."""
    specs = report.get("specs", {})
    n = beyond = 0
    for r in report["rows"]:
        advice = (r.get("analysis") or {}).get("advice")
        t = (r.get("counters") or {}).get("gpu_time_seconds")
        spec = specs.get(r.get("spec"), {})
        # µs; the tool assumes 1 µs (0.5 µs for a node) without a measured one
        if r["launch"].get("node_kind"):
            floor = spec.get("node_floor_us") or 0.5
        else:
            floor = spec.get("launch_floor_us") or 1.0
        if r["launch"].get("graph") or not advice or not isinstance(t, (int, float)) or t <= 0:
            continue
        n += 1
        beyond += advice["estimated_speedup"] > max(1.0, t / (floor * 1e-6)) * 1.0001
    return n, beyond


def levers(tool, path):
    """{(launch index, node position): (kernel, lever)} as the tool judges the report now."""
    rows = judged(tool, path)["rows"]
    found = {}
    for r in rows:
        launch = r["launch"]
        if launch.get("graph"):
            continue
        advice = (r.get("analysis") or {}).get("advice")
        if advice:
            found[(launch["index"], launch.get("node_position"))] = (r["kernel"], advice["lever"])
    return found


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        sys.exit(2)
    tool, reference, others = sys.argv[1], sys.argv[2], sys.argv[3:]
    for path in [reference] + others:
        n, recorded = beyond_floor(json.load(open(path)))
        _, now = beyond_floor(judged(tool, path))
        print(f"{os.path.basename(path)}: gains beyond time / launch floor: {recorded} of {n} "
              f"launches as recorded, {now} as judged now")
    ref = levers(tool, reference)
    for path in others:
        other = levers(tool, path)
        common = [k for k in ref if k in other and ref[k][0] == other[k][0]]
        same = sum(ref[k][1] == other[k][1] for k in common)
        differ = collections.Counter(
            (ref[k][1], other[k][1]) for k in common if ref[k][1] != other[k][1])
        share = f" ({100 * same / len(common):.0f}%)" if common else ""
        print(f"{os.path.basename(path)}: {same}/{len(common)} launches with the lever of "
              f"{os.path.basename(reference)}{share}")
        for (a, b), n in differ.most_common(8):
            print(f"  {n:4d}  {a} -> {b}")


if __name__ == "__main__":
    main()
