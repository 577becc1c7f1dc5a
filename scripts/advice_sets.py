#!/usr/bin/env python3
"""Does a launch get the same advice under every counter set? Re-judges saved `profile` reports
of one program with the tool's current analysis and compares each launch's lever between them.

    python3 scripts/advice_sets.py TOOL REFERENCE.json OTHER.json...

TOOL: the cuflash-roofline binary. REFERENCE.json: a report of the program under one counter set
(e.g. --counter-set full); OTHER.json: reports of the same deterministic program under others
(or in other runs). Launches pair by launch index and node position, and only when their kernel
names agree. Prints, for each OTHER, how many launches got the reference's lever and the most
common pairs that did not. Asserts nothing.
"""
import collections
import json
import os
import subprocess
import sys
import tempfile


def levers(tool, path):
    """{(launch index, node position): (kernel, lever)} as the tool judges the report now."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "judged.json")
        subprocess.run([tool, "show", path, "--json", out, "-q"], check=True,
                       stdout=subprocess.DEVNULL)
        rows = json.load(open(out))["rows"]
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
