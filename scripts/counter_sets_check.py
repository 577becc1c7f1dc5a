#!/usr/bin/env python3
"""The bundled kernels under both counter sets: same lever, and counted exponentials against the
model. Re-judges `run` reports with the tool's current analysis.

    python3 scripts/counter_sets_check.py TOOL DIR

DIR holds pairs NAME_roofline.json and NAME_full.json: `run ... --counter-set roofline` and
`run ... --counter-set full` of the same workloads (tests/data/reports/h200_counter_sets.tar.xz:
three held-out shapes, FP16 and BF16, fwd and bwd, causal and not). Prints, for every row timed
in both, whether the advice names the same lever under both sets (and the regimes where not), and
for the full set's rows the counted exponentials (XU-pipe warp instructions x 32) over the
model's, with the rows outside 2%. Asserts nothing.
"""
import glob
import os
import sys

from advice_sets import judged  # the report as the tool judges it now


def label(row):
    w = row["workload"]
    return (f"{row['kernel']:<9} B{w['batch']} H{w['heads']} N{w['seq_len']} d{w['head_dim']} "
            f"{'causal' if w['causal'] else 'full  '} {w['pass']} {w.get('dtype', 'fp16')}")


def value(x):
    return x.get("value") if isinstance(x, dict) else x


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    tool, folder = sys.argv[1], sys.argv[2]
    same = total = 0
    differ = []
    ratios = []
    for path in sorted(glob.glob(os.path.join(folder, "*_roofline.json"))):
        other = path.replace("_roofline.json", "_full.json")
        if not os.path.exists(other):
            continue
        a = {label(r): r for r in judged(tool, path)["rows"]}
        b = {label(r): r for r in judged(tool, other)["rows"]}
        for key, ra in a.items():
            rb = b.get(key)
            if rb is None or ra["status"] != "ok" or rb["status"] != "ok":
                continue
            la = (ra["analysis"].get("advice") or {}).get("lever")
            lb = (rb["analysis"].get("advice") or {}).get("lever")
            total += 1
            if la == lb:
                same += 1
            else:
                differ.append((key, la, lb, ra["analysis"]["regime"], rb["analysis"]["regime"]))
            ratio = value((rb["analysis"].get("exp") or {}).get("exponentials_vs_model"))
            if isinstance(ratio, (int, float)):
                ratios.append((key, ratio))
    print(f"lever the same under --counter-set roofline and full: {same}/{total}")
    for key, la, lb, ga, gb in differ:
        print(f"  {key}: {la} ({ga}) / {lb} ({gb})")
    inside = [r for r in ratios if abs(r[1] - 1) <= 0.02]
    print(f"counted exponentials within 2% of the model: {len(inside)}/{len(ratios)}")
    for key, ratio in ratios:
        if abs(ratio - 1) > 0.02:
            print(f"  {key}: {ratio:.4f}")


if __name__ == "__main__":
    main()
