#!/usr/bin/env python3
"""Issue 39's advice on real programs: no gain below the launch floor, waiting kernels called so.
Judges `profile --json` reports of programs (scripts/floor_check.sh records them) as the tool
judges them now:

    python3 scripts/floor_check.py TOOL REPORT.json...

Per report: the launches with advice and those whose estimated gain exceeds the launch's time over
the GPU's launch floor (the spec's launch_floor_us, node_floor_us for a graph node: no kernel runs
in less), the largest gain, and every launch that computes nothing the counters see for long (its
advice says it waits), with its time and share of the program's kernel time; kernels whose names
say they spin or wait (Delay, Spin, Wait, Sleep) are listed with the lever they got (or as left
unmeasured, where `profile` does not wait for a kernel its host thread releases). PASS when no gain
exceeds the floor and every such named kernel of 20 µs or more, or left unmeasured, is called
waiting. Exits 0 either way (a report, not a gate).
"""
import collections
import json
import os
import re
import sys

from advice_sets import beyond_floor, judged

NAMED_WAIT = re.compile(r"delay|spin|wait|sleep", re.I)
WAITS = "it waits"


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    tool, paths = sys.argv[1], sys.argv[2:]
    floor_ok = wait_ok = True
    for path in paths:
        if not os.path.exists(path):
            print(f"{os.path.basename(path)}: no report")
            floor_ok = False
            continue
        report = judged(tool, path)
        n, beyond = beyond_floor(report)
        rows = [r for r in report["rows"] if not r["launch"].get("graph")]
        total = sum((r.get("counters") or {}).get("gpu_time_seconds") or 0 for r in rows)
        gains = [((r.get("analysis") or {}).get("advice") or {}).get("estimated_speedup") or 1
                 for r in rows]
        waiting = collections.defaultdict(lambda: [0, 0.0])
        named = collections.defaultdict(lambda: [0, 0.0, collections.Counter()])
        for r in rows:
            advice = (r.get("analysis") or {}).get("advice") or {}
            t = (r.get("counters") or {}).get("gpu_time_seconds") or 0
            calls_waiting = WAITS in advice.get("evidence", "")
            if calls_waiting:
                waiting[r["kernel"]][0] += 1
                waiting[r["kernel"]][1] += t
            if NAMED_WAIT.search(r["kernel"]) and not t and "spins until" in (r.get("message") or ""):
                # Left to run as alone (lib/inject/host_gated.hpp): its row says it waits.
                named[r["kernel"]][0] += 1
                named[r["kernel"]][2]["waits"] += 1
                continue
            if NAMED_WAIT.search(r["kernel"]) and t >= 20e-6:
                named[r["kernel"]][0] += 1
                named[r["kernel"]][1] += t
                named[r["kernel"]][2]["waits" if calls_waiting else advice.get("lever", "-")] += 1
        print(f"{os.path.basename(path)}: {len(rows)} launches, {total * 1e3:.2f} ms of kernel "
              f"time; {n} with advice, {beyond} with a gain beyond time / launch floor "
              f"(largest gain x{max(gains, default=1):.2f})")
        for kernel, (count, t) in sorted(waiting.items(), key=lambda kv: -kv[1][1]):
            print(f"  waits: {kernel[:70]}: {count} launch(es), {t * 1e6:.0f} us "
                  f"({100 * t / total if total else 0:.1f}% of the kernel time)")
        for kernel, (count, t, levers) in named.items():
            called = levers.get("waits", 0) == count
            wait_ok &= called
            print(f"  named as waiting: {kernel[:70]}: {count} launch(es) of 20 us or more or unmeasured, "
                  f"{t * 1e6:.0f} us; advice {dict(levers)}: {'called waiting' if called else 'NOT'}")
        floor_ok &= beyond == 0
    print(f"no gain beyond the launch floor: {'PASS' if floor_ok else 'FAIL'}")
    print(f"kernels named as waiting called so: {'PASS' if wait_ok else 'FAIL'}")


if __name__ == "__main__":
    main()
