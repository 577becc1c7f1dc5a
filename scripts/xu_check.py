#!/usr/bin/env python3
"""Issue 23's acceptance tables, from what `device_check.sh xu` wrote into DIR:

    python3 scripts/xu_check.py DIR

  counted_d64.json, counted_d128.json   run --counters --counter-set full (flash-v2, flash-v3)
  ncu_d64.csv, ncu_d128.csv             ncu on run --no-counters of the flash-v3 points, with
  ncu_points_d64.json, ...              the points in ncu's order (kernel replay: one result
                                        per kernel, grouped per point by count)
  calibration.json                      calibrate
  b200.json                             run --no-counters --gpu b200 (projection)

Prints the tables and a PASS/FAIL line per target (the B200 projection: which roof binds, no
target); exits 0 either way (a report, not a gate).
"""
import csv
import json
import os
import sys

LANES = 32


def load(path):
    with open(path) as f:
        return json.load(f)


def value(tagged):
    if isinstance(tagged, dict):
        return tagged.get("value")
    return tagged


def label(row):
    w = row["workload"]
    return (f"{row['kernel']:<9} d{w['head_dim']:<3} {'causal' if w['causal'] else 'full  '} "
            f"{w['pass']}")


def verdict(ok):
    return "PASS" if ok else "FAIL"


def read_ncu(path):
    with open(path) as f:
        lines = [l for l in f if l.startswith('"')]
    rows = list(csv.DictReader(lines))
    if rows and rows[0].get("ID", "") == "":
        rows = rows[1:]  # units line
    return rows


def number(text):
    try:
        return float(str(text).replace(",", ""))
    except ValueError:
        return float("nan")


def main():
    d = sys.argv[1]
    rows = []
    for dim in (64, 128):
        path = os.path.join(d, f"counted_d{dim}.json")
        if os.path.exists(path):
            rows += [r for r in load(path)["rows"] if r["status"] == "ok"]

    print("== XU: counted warp instructions vs model exponentials / 32 (target within 2%)")
    worst = 0.0
    above = []
    print(f"  {'row':<30} {'counted':>12} {'model/32':>12} {'ratio':>7} {'XU roof':>8} "
          f"{'TFLOP/s':>8} {'regime'}")
    for r in rows:
        counted = r["counters"].get("xu_instructions")
        model = r["model"].get("exponentials")
        a = r["analysis"]
        e = a.get("exp") or {}
        roof = value(e.get("roof_tflops_per_second"))
        roof_clock = value(e.get("roof_tflops_per_second_at_measured_clock"))
        tflops = value(a.get("tflops_per_second"))
        if counted is None or not model:
            print(f"  {label(r):<30} missing counted or model exponentials")
            continue
        ratio = counted / (model / LANES)
        worst = max(worst, abs(ratio - 1))
        limit = roof_clock if roof_clock else roof
        if roof and tflops and limit and tflops > limit * 1.0:
            above.append(label(r))
        print(f"  {label(r):<30} {counted:12.4g} {model / LANES:12.4g} {ratio:7.4f} "
              f"{(roof or float('nan')):8.1f} {(tflops or float('nan')):8.1f} {a['regime']}")
    print(f"  worst |ratio - 1| = {100 * worst:.2f}%: {verdict(worst <= 0.02 and rows)}")
    print(f"  rows above their XU roof (at the measured clock): {len(above)} "
          f"{verdict(not above)} {', '.join(above)}")

    print("== flash-v3 d64 forward: XU roof vs tensor roof (target within 15%)")
    for r in rows:
        w = r["workload"]
        if r["kernel"] != "flash-v3" or w["head_dim"] != 64 or w["pass"] != "fwd":
            continue
        a = r["analysis"]
        roof = value((a.get("exp") or {}).get("roof_tflops_per_second"))
        peak = value((a.get("ceiling") or {}).get("peak_tflops"))
        if roof and peak:
            print(f"  {label(r):<30} XU {roof:7.1f}  tensor {peak:7.1f}  ratio {roof / peak:.3f} "
                  f"{verdict(abs(roof / peak - 1) <= 0.15)}")

    print("== shared memory: our wavefronts vs ncu's, flash-v3 (target within 2%)")
    for dim in (64, 128):
        points_path = os.path.join(d, f"ncu_points_d{dim}.json")
        ncu_path = os.path.join(d, f"ncu_d{dim}.csv")
        if not (os.path.exists(points_path) and os.path.exists(ncu_path)):
            print(f"  d{dim}: missing {points_path} or {ncu_path}")
            continue
        points = [p for p in load(points_path)["rows"] if p["status"] == "ok"]
        kernels = read_ncu(ncu_path)
        # One group per point, in order: a forward point is its one kernel, a backward point
        # runs from its prepare kernel through the dQ conversion (three kernels).
        groups = []
        for k in kernels:
            name = k.get("Kernel Name", "")
            if "forward_kernel" in name or "bwd_prepare" in name or not groups:
                groups.append([])
            groups[-1].append(k)
        if len(groups) != len(points):
            print(f"  d{dim}: {len(groups)} ncu kernel groups for {len(points)} points: cannot pair")
            continue
        ours = {label(r): r for r in rows}
        for i, p in enumerate(points):
            group = groups[i]
            per = len(group)
            total = sum(number(k.get("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")) for k in group)
            gmma = sum(number(k.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum"))
                       for k in group)
            by_op = {op: sum(number(k.get(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"))
                             for k in group) for op in ("ld", "st", "atom")}
            xu = sum(number(k.get("sm__inst_executed_pipe_xu.sum")) for k in group)
            mine = ours.get(label(p))
            if mine is None:
                print(f"  {label(p):<30} not counted by us")
                continue
            c = mine["counters"]
            sw, sg = c.get("shared_wavefronts", float("nan")), c.get("shared_wavefronts_gmma", float("nan"))
            rt, rg = sw / total if total else float("nan"), sg / gmma if gmma else float("nan")
            rx = c.get("xu_instructions", float("nan")) / xu if xu else float("nan")
            ok = abs(rt - 1) <= 0.02 and (gmma == 0 or abs(rg - 1) <= 0.02)
            print(f"  {label(p):<30} bytes ours {128 * sw / 1e9:8.3f} GB ncu {128 * total / 1e9:8.3f} GB "
                  f"({rt:.4f}); gmma {rg:.4f}; ld/st/atom ncu {by_op['ld']:.3g}/{by_op['st']:.3g}/"
                  f"{by_op['atom']:.3g}; XU ours/ncu {rx:.4f}  {per} kernels  {verdict(ok)}")

    print("== calibrate: XU rate vs the spec at the running clock (target within 5%)")
    cal_path = os.path.join(d, "calibration.json")
    if os.path.exists(cal_path):
        cal = load(cal_path)
        sms = cal["device"]["sm_count"]
        for m in cal["measurements"]:
            if m["target"] != "xu":
                continue
            samples = sorted(m["samples_seconds"])
            rate = m["work"] / samples[len(samples) // 2]
            per_clock = rate / (sms * m["sm_clock_mhz"] * 1e6)
            print(f"  {m['id']}: {rate / 1e12:.3f} T exp2/s at {m['sm_clock_mhz']:.0f} MHz = "
                  f"{per_clock:.2f} per clock and SM (spec 16): {verdict(abs(per_clock / 16 - 1) <= 0.05)}")
    else:
        print("  no calibration.json")

    print("== projection onto the B200 (flash-v3 d128): the roof that binds each row, and the XU "
          "roof beside it (a report: which roof binds is the finding, not a target)")
    b200_path = os.path.join(d, "b200.json")
    if os.path.exists(b200_path):
        for r in load(b200_path)["rows"]:
            if r["status"] != "ok":
                continue
            a = r["analysis"]
            roof = value((a.get("exp") or {}).get("roof_tflops_per_second"))
            # The row's own verdict: the attainable rate of the roof that binds it (a memory level,
            # the tail or the pipe), not the pipe's peak.
            binding = value(a.get("attainable_tflops_per_second"))
            line = (f"  {label(r):<30} regime {a['regime']}; XU roof {roof or float('nan'):.1f}, "
                    f"binding roof ({a.get('binding')}) {binding or float('nan'):.1f} TFLOP/s")
            if roof and binding:
                line += (f": XU binds" if a.get("exp_bound") else
                         f": XU does not bind, its roof {roof / binding:.3f}x the binding one")
            print(line)
    else:
        print("  no b200.json")


if __name__ == "__main__":
    main()
