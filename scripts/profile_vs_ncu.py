#!/usr/bin/env python3
"""Per-kernel agreement of `cuflash-roofline profile` with Nsight Compute on the same program.

    python3 scripts/profile_vs_ncu.py PROFILE.json NCU.csv
    python3 scripts/profile_vs_ncu.py PROFILE.json OTHER_PROFILE.json

PROFILE.json: `cuflash-roofline profile --json` of a one-process program (every kernel).
NCU.csv: `ncu --clock-control none --cache-control all --csv --page raw --metrics LIST` of the
same program (every kernel). Launches are paired in order; a pair whose kernel names disagree
is reported and not compared. For each kernel: DRAM bytes (read + write), L2 bytes (SM side)
and tensor FLOPs (mma.sync + wgmma), ours / ncu. Prints a table and a summary line per
quantity (how many kernels are within 2%); asserts nothing. With a second report of ours
instead of the CSV (two runs of the same program, e.g. two replay modes), the same table
compares the two reports' rows in order ("ncu" then names the second report).

    python3 scripts/profile_vs_ncu.py --ours-ncu NCU_2.csv NCU.csv

compares two ncu runs of the same program: how far ncu agrees with itself.
"""
import json
import math
import sys

from ncu_compare import read_ncu, scaled

TENSOR = ("sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum",
          "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16_sparsity_off.sum",
          "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum")


def ncu_quantities(row, units):
    dram = scaled(row, units, "dram__bytes_read.sum") + scaled(row, units, "dram__bytes_write.sum")
    l2 = scaled(row, units, "lts__t_sectors_srcunit_tex.sum")  # "sector" unit: × 32 bytes
    tensor = sum(v for v in (scaled(row, units, m) for m in TENSOR) if not math.isnan(v))
    return dram, l2, tensor


def ours_quantities(row):
    c = row["counters"]
    get = lambda k: c.get(k) if isinstance(c.get(k), (int, float)) else float("nan")
    tensor = sum(v for v in (get("tensor_mma_sync_flops"), get("tensor_wgmma_flops"))
                 if not math.isnan(v))
    return get("dram_read_bytes") + get("dram_write_bytes"), get("l2_bytes"), tensor


def ratio(a, b):
    if b == 0:
        return 1.0 if a == 0 else float("inf")
    return a / b


def ncu_as_ours(path):
    """ncu's rows in the shape of our report's, with their three quantities precomputed."""
    rows, units = read_ncu(path)
    return [{"kernel": r.get("Kernel Name", ""), "launch": {"nvtx_range": ""},
             "quantities": ncu_quantities(r, units)} for r in rows]


def main():
    args = sys.argv[1:]
    mine = ours_quantities
    if args[0] == "--ours-ncu":
        args = args[1:]
        ours = ncu_as_ours(args[0])
        mine = lambda row: row["quantities"]
    else:
        ours = json.load(open(args[0]))["rows"]
    if args[1].endswith(".json"):
        ncu = [dict(r, **{"Kernel Name": r["kernel"]}) for r in json.load(open(args[1]))["rows"]]
        units, other = None, ours_quantities
    else:
        ncu, units = read_ncu(args[1])
        other = lambda row: ncu_quantities(row, units)
    print(f"kernels: ours {len(ours)}, ncu {len(ncu)}")
    names = ("DRAM", "L2", "tensor")
    within = {q: [0, 0] for q in names}
    big_within = {q: [0, 0] for q in names}
    print(f"{'#':>3} {'kernel':34} {'range':26} {'DRAM ours/ncu':>14} {'L2 ours/ncu':>12} "
          f"{'tensor ours/ncu':>16}")
    for i, (o, n) in enumerate(zip(ours, ncu)):
        short = o["kernel"].split("::")[-1]
        if short not in n.get("Kernel Name", ""):
            print(f"{i:3} name mismatch: ours {o['kernel']!r}, ncu {n.get('Kernel Name')!r}")
            continue
        a, b = mine(o), other(n)
        cells = []
        for q, x, y in zip(names, a, b):
            if math.isnan(x) or math.isnan(y) or (x == 0 and y == 0):
                cells.append("-")
                continue
            r = ratio(x, y)
            ok = abs(r - 1) <= 0.02
            within[q][0] += ok
            within[q][1] += 1
            if y >= 1e8 or (q == "tensor" and y > 0):  # kernels that move >= 100 MB or use tensor cores
                big_within[q][0] += ok
                big_within[q][1] += 1
            cells.append(f"{r:.4f}{'' if ok else ' !'}")
        rng = o["launch"]["nvtx_range"][:26]
        print(f"{i:3} {o['kernel'][:34]:34} {rng:26} {cells[0]:>14} {cells[1]:>12} {cells[2]:>16}")
    for q in names:
        print(f"{q}: {within[q][0]}/{within[q][1]} kernels within 2% of ncu; "
              f"large kernels (>= 100 MB, or any tensor work): {big_within[q][0]}/{big_within[q][1]}")


if __name__ == "__main__":
    main()
