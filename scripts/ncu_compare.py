#!/usr/bin/env python3
"""Fidelity table: cuflash-roofline's counters beside Nsight Compute's on the same launches.

    python3 scripts/ncu_compare.py OURS.json NCU.csv

OURS.json: `cuflash-roofline run --counters --json` for the points.
NCU.csv: `ncu --replay-mode range --profile-from-start off --clock-control none --csv
          --page raw --metrics ... cuflash-roofline run --no-counters --reps 1 --warmup 0`
for the same points, in the same order (one profiler range per point: the binary wraps its
first timed launch in cudaProfilerStart/Stop when counters are off). If ncu ran in kernel
replay mode instead, rows are grouped by the `--kernels-per-point` counts from OURS (one
launch per kernel). Prints ours, ncu and ours/ncu for DRAM bytes (read + write), L2 bytes,
tensor FLOPs and time. Prints a table; asserts nothing.
"""
import csv
import json
import sys


def number(text):
    text = text.replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return float("nan")


def read_ncu(path):
    rows = []
    with open(path) as f:
        lines = [l for l in f if l.startswith('"')]
    reader = csv.DictReader(lines)
    units = None
    for row in reader:
        if units is None and row.get("ID", "") == "":
            units = row  # second header line: units
            continue
        rows.append(row)
    return rows, units or {}


def scaled(row, units, metric):
    value = number(row.get(metric, "nan"))
    unit = (units.get(metric) or "").strip()
    factor = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "nsecond": 1e-9, "ns": 1e-9,
              "usecond": 1e-6, "us": 1e-6, "msecond": 1e-3, "ms": 1e-3, "second": 1, "s": 1,
              "sector": 32}.get(unit, 1)
    return value * factor


def group_kernels(ncu_rows, points):
    """Kernel replay gives one result per kernel: sum the launches of each point. A flash point
    is one kernel (flash-decode split: its kernel and the combine); a standard forward point is GEMM, softmax, GEMM (cuBLAS may add kernels
    before the second GEMM, so it runs to the first non-softmax kernel after the softmax)."""
    groups, i = [], 0
    for point in points:
        if point["kernel"] != "standard":
            # A split flash-decode point is its kernel and the combine kernel after it.
            group = [ncu_rows[i]]
            i += 1
            while i < len(ncu_rows) and "combine" in ncu_rows[i]["Kernel Name"]:
                group.append(ncu_rows[i])
                i += 1
            groups.append(group)
            continue
        group, seen_softmax = [], False
        while i < len(ncu_rows):
            name = ncu_rows[i]["Kernel Name"]
            group.append(ncu_rows[i])
            i += 1
            if "softmax" in name:
                seen_softmax = True
            elif seen_softmax:
                break
        groups.append(group)
    if i != len(ncu_rows):
        return None
    summed = []
    for group in groups:
        row = dict(group[0])
        for key in row:
            values = [number(g.get(key, "")) for g in group]
            if all(v == v for v in values):
                row[key] = str(sum(values))
        summed.append(row)
    return summed


def main():
    ours = json.load(open(sys.argv[1]))
    ncu_rows, units = read_ncu(sys.argv[2])
    points = [r for r in ours["rows"] if r["status"] in ("ok", "counters_unavailable")]
    if len(ncu_rows) != len(points) and "Kernel Name" in (ncu_rows[0] if ncu_rows else {}):
        grouped = group_kernels(ncu_rows, points)
        if grouped is not None:
            ncu_rows = grouped
    if len(ncu_rows) != len(points):
        print("ncu returned %d results for %d points: cannot pair them" % (len(ncu_rows), len(points)))
        sys.exit(1)
    tensor_metrics = [m for m in (units or {}) if "ops_path_tensor" in m]
    print("%-9s %-18s %-6s %14s %14s %8s" % ("kernel", "workload", "what", "ours", "ncu", "ours/ncu"))
    worst = {}
    for ours_row, ncu in zip(points, ncu_rows):
        c = ours_row["counters"]
        w = ours_row["workload"]
        label = "N=%d %s" % (w["seq_len"], "causal" if w["causal"] else "full")
        if w.get("q_len"):
            label = "B%d Hkv%d KV%d" % (w["batch"], w.get("kv_heads") or w["heads"], w["seq_len"])
        pairs = [
            ("DRAM", c.get("dram_read_bytes", 0) + c.get("dram_write_bytes", 0),
             scaled(ncu, units, "dram__bytes_read.sum") + scaled(ncu, units, "dram__bytes_write.sum")),
            ("L2", c.get("l2_bytes", float("nan")),
             scaled(ncu, units, "lts__t_sectors_srcunit_tex.sum") *
             (32 if units.get("lts__t_sectors_srcunit_tex.sum", "").strip() != "sector" else 1)),
            ("tensor", c.get("tensor_mma_sync_flops", 0) + c.get("tensor_wgmma_flops", 0),
             sum(scaled(ncu, units, m) for m in tensor_metrics)),
            ("time", ours_row["timing"]["median_seconds"], scaled(ncu, units, "gpu__time_duration.sum")),
            ("time(cupti)", c.get("gpu_time_seconds", float("nan")),
             scaled(ncu, units, "gpu__time_duration.sum")),
        ]
        for what, a, b in pairs:
            r = a / b if b else float("nan")
            worst[what] = max(worst.get(what, 0), abs(r - 1) if r == r else 0)
            print("%-9s %-18s %-6s %14.6g %14.6g %8.4f" % (ours_row["kernel"], label, what, a, b, r))
    print("worst |ours/ncu - 1|: " + ", ".join("%s %.2f%%" % (k, 100 * v) for k, v in worst.items()))


if __name__ == "__main__":
    main()
