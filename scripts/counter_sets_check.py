#!/usr/bin/env python3
"""The bundled kernels under both counter sets: same lever, and counted exponentials against the
model. Re-judges `run` reports with the tool's current analysis.

    python3 scripts/counter_sets_check.py TOOL DIR

DIR holds pairs NAME_roofline.json and NAME_full.json: `run ... --counter-set roofline` and
`run ... --counter-set full` of the same workloads (tests/data/reports/h200_counter_sets.tar.xz:
three held-out shapes, FP16 and BF16, fwd and bwd, causal and not). Prints, for every row timed
in both, whether the advice names the same lever under both sets (and the regimes where not), and
for the full set's rows the counted exponentials (XU-pipe warp instructions x 32) over the
model's as the tool predicts them now (`TOOL model`), with the rows outside 2%. Asserts
nothing.
"""
import glob
import json
import os
import subprocess
import sys

from advice_sets import judged  # the report as the tool judges it now


_models = {}


def modelled(tool, row):
    """label -> the model's exponentials now (`TOOL model`) for the row's shape and dtype."""
    w = row["workload"]
    shape = (w["batch"], w["heads"], w["seq_len"], w["head_dim"], w.get("dtype", "fp16"))
    if shape not in _models:
        out = subprocess.run(
            [tool, "model", "--gpu", row["spec"], "--batch", str(shape[0]), "--heads",
             str(shape[1]), "--seq", str(shape[2]), "--head-dim", str(shape[3]), "--dtype",
             shape[4], "--pass", "fwd,bwd", "--json", "-"],
            check=True, capture_output=True, text=True).stdout
        _models[shape] = {label(r): r["model"]["exponentials"] for r in json.loads(out)["rows"]}
    return _models[shape]


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
            exp = rb["analysis"].get("exp") or {}
            counted = exp.get("exponentials") or {}
            model = modelled(tool, rb).get(key)
            if isinstance(counted, dict) and counted.get("source") == "measured" and model:
                counted = counted["value"]
                ratios.append((key, counted / model))
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
