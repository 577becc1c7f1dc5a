#!/usr/bin/env python3
"""Launch-by-launch agreement of `cuflash-roofline profile` with Nsight Compute on one program.

    python3 scripts/profile_vs_ncu.py PROFILE.json NCU.csv [--all]
    python3 scripts/profile_vs_ncu.py PROFILE.json OTHER_PROFILE.json
    python3 scripts/profile_vs_ncu.py --ours-ncu NCU_2.csv NCU.csv

PROFILE.json: `cuflash-roofline profile --json` of a one-process program (every kernel).
NCU.csv: `ncu --clock-control none --cache-control all --csv --page raw --metrics LIST` of the
same program (every kernel; LIST from `cuflash-roofline metrics --chip GH100 --list`).

Launches are paired in order. ncu profiles each kernel node of a CUDA graph launch on its own,
while our row of a graph launch holds all of them (its `kernel_count`): such a row is paired
with that many ncu kernels, times and bytes summed. A pair whose kernel names disagree is
reported and not compared (the pairing then stops: the order is lost).

Per pair: time (our `gpu_time_seconds` against ncu's `gpu__time_duration.sum`), DRAM bytes (read
+ write), L2 bytes (SM side) and tensor FLOPs (mma.sync + wgmma), ours / ncu. Printed: a line per
launch with --all (else only the launches that miss a criterion), then the acceptance lines:
  time: every launch of >= 20 us within 5%; below 20 us within 2 us + 10%; the sum within 5%;
  the first launch of each kernel listed apart (module loading falls there);
  DRAM and L2: within 2% on >= 95% of the kernels that move >= 100 MB; tensor FLOPs exact;
  time shares by kernel name (ours and ncu's), the top 10.
Asserts nothing: it prints the table. With a second report of ours instead of the CSV, the
same table compares two runs of ours; with --ours-ncu, two ncu runs (ncu against itself).
"""
import collections
import json
import math
import sys

from ncu_compare import read_ncu, scaled

TENSOR = ("sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum",
          "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16_sparsity_off.sum",
          "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum",
          "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_off.sum",
          "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum",
          "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum",
          "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum")
NAN = float("nan")


def ncu_quantities(row, units):
    """time (s), DRAM bytes, L2 bytes, tensor FLOPs of one ncu result."""
    time = scaled(row, units, "gpu__time_duration.sum")
    dram = scaled(row, units, "dram__bytes_read.sum") + scaled(row, units, "dram__bytes_write.sum")
    l2 = scaled(row, units, "lts__t_sectors_srcunit_tex.sum")  # "sector" unit: × 32 bytes
    values = [scaled(row, units, m) for m in TENSOR]
    tensor = sum(v for v in values if not math.isnan(v)) if any(
        not math.isnan(v) for v in values) else NAN
    return [time, dram, l2, tensor]


def ours_quantities(row):
    c = row.get("counters", {})
    get = lambda k: c.get(k) if isinstance(c.get(k), (int, float)) else NAN
    parts = [get("tensor_mma_sync_flops"), get("tensor_wgmma_flops")]
    tensor = sum(v for v in parts if not math.isnan(v)) if any(
        not math.isnan(v) for v in parts) else NAN
    return [get("gpu_time_seconds"), get("dram_read_bytes") + get("dram_write_bytes"),
            get("l2_bytes"), tensor, get("kernel_execution_seconds"),
            get("range_time_seconds")]


def kernels_of(row):
    c = row.get("counters", {})
    n = c.get("kernel_count")
    return int(n) if isinstance(n, (int, float)) and n >= 1 else 1


def add(a, b):
    return [x + y for x, y in zip(a, b)]


def ratio(a, b):
    if b == 0:
        return 1.0 if a == 0 else float("inf")
    return a / b


def load_other(path):
    """The reference launches as (name, graph?, kernels, quantities) lists, one per kernel."""
    if path.endswith(".json"):
        return [(r["kernel"], ours_quantities(r)) for r in json.load(open(path))["rows"]]
    rows, units = read_ncu(path)
    return [(r.get("Kernel Name", ""), ncu_quantities(r, units)) for r in rows]


def our_launches(path):
    return [{"kernel": r["kernel"], "q": ours_quantities(r), "kernels": kernels_of(r),
             "graph": r["launch"].get("graph", False), "range": r["launch"]["nvtx_range"],
             "status": r["status"]} for r in json.load(open(path))["rows"]]


def pair(ours, other):
    """(index, our launch, the reference's quantities summed over its kernels, its name) for
    each of our launches, in order, until the names stop matching."""
    pairs = []
    j = 0
    for i, o in enumerate(ours):
        group = other[j:j + o["kernels"]]
        if len(group) < o["kernels"]:
            print(f"{i:4} the reference ran out of kernels")
            break
        short = o["kernel"].split("::")[-1]
        if not o["graph"] and short not in group[0][0]:
            print(f"{i:4} name mismatch: ours {o['kernel']!r}, reference {group[0][0]!r}: "
                  "pairing stops here")
            break
        q = group[0][1]
        for _, more in group[1:]:
            q = add(q, more)
        pairs.append((i, o, q, group[0][0]))
        j += o["kernels"]
    return pairs


def main():
    args = [a for a in sys.argv[1:] if a != "--all"]
    show_all = "--all" in sys.argv
    if args[0] == "--ours-ncu":
        ours = [{"kernel": n, "q": q, "kernels": 1, "graph": False, "range": ""}
                for n, q in load_other(args[1])]
        other = load_other(args[2])
    else:
        ours = our_launches(args[0])
        other = load_other(args[1])
    print(f"launches: ours {len(ours)} ({sum(o['kernels'] for o in ours)} kernels), "
          f"reference {len(other)} kernels")
    names = ("time", "DRAM", "L2", "tensor")
    pairs = pair(ours, other)
    seen = set()
    time_ok = [0, 0]
    fails = []
    first = []
    sums = [0.0, 0.0]
    shares_ours = collections.Counter()
    shares_ref = collections.Counter()
    big = {q: [0, 0] for q in names[1:]}
    print(f"{'#':>4} {'kernel':40} {'ours us':>10} {'ref us':>10} {'time':>8} {'DRAM':>8} "
          f"{'L2':>8} {'tensor':>8}  note")
    for i, o, ref, ref_name in pairs:
        mine = o["q"]
        key = "graph" if o["graph"] else o["kernel"]
        first_launch = key not in seen
        seen.add(key)
        t, tr = mine[0], ref[0]
        cells, notes = [], []
        good = True
        if not (math.isnan(t) or math.isnan(tr)):
            sums[0] += t
            sums[1] += tr
            shares_ours[key] += t
            shares_ref[key] += tr
            limit = 0.05 * tr if tr >= 20e-6 else 2e-6 + 0.10 * tr
            ok = abs(t - tr) <= limit
            time_ok[0] += ok
            time_ok[1] += 1
            good = good and ok
            cells.append(f"{ratio(t, tr):.3f}{'' if ok else '!'}")
            if first_launch:
                first.append((o["kernel"], t, tr, ok))
        else:
            cells.append("-")
            notes.append("no time")
        for qi, name in enumerate(names[1:], start=1):
            x, y = mine[qi], ref[qi]
            if math.isnan(x) or math.isnan(y) or (x == 0 and y == 0):
                cells.append("-")
                continue
            r = ratio(x, y)
            ok = (r == 1.0) if name == "tensor" else abs(r - 1) <= 0.02
            counted = (name == "tensor" and y > 0) or (name != "tensor" and y >= 1e8)
            if counted:
                big[name][0] += ok
                big[name][1] += 1
                good = good and ok
            cells.append(f"{r:.4f}{'' if ok or not counted else '!'}")
        if o["graph"]:
            notes.append(f"graph launch, {o['kernels']} kernels")
        if o.get("status", "ok") != "ok":
            notes.append(o["status"])
        line = (f"{i:4} {o['kernel'][:40]:40} {t * 1e6:10.1f} {tr * 1e6:10.1f} "
                + " ".join(f"{c:>8}" for c in cells) + "  " + ", ".join(notes))
        if show_all or not good:
            print(line)
        if not good:
            fails.append(i)
    print()
    for label, k in (("execution alone", 4), ("of the range", 5)):
        d = [(o["q"][k] - ref[0]) * 1e6 for _, o, ref, _ in pairs
             if len(o["q"]) > k and not math.isnan(o["q"][k]) and not math.isnan(ref[0])]
        if d:
            d.sort()
            print(f"other time ({label}) minus the reference: median {d[len(d) // 2]:+.2f} us, "
                  f"10% {d[len(d) // 10]:+.2f}, 90% {d[9 * len(d) // 10]:+.2f} ({len(d)} launches)")
    print(f"time: {time_ok[0]}/{time_ok[1]} launches within 5% (>= 20 us) or 2 us + 10% "
          f"(< 20 us) of the reference")
    if sums[1] > 0:
        print(f"time summed over {time_ok[1]} launches: ours {sums[0] * 1e3:.3f} ms, reference "
              f"{sums[1] * 1e3:.3f} ms, ratio {sums[0] / sums[1]:.4f}")
    firsts_ok = sum(ok for *_, ok in first)
    print(f"first launches: {firsts_ok}/{len(first)} within the time criterion; worst: " +
          ", ".join(f"{k.split('::')[-1][:28]} {t * 1e6:.1f}/{tr * 1e6:.1f} us"
                    for k, t, tr, _ in sorted(first, key=lambda f: -abs(math.log(
                        max(f[1], 1e-9) / max(f[2], 1e-9))))[:3]))
    for q in names[1:]:
        n_ok, n = big[q]
        crit = "exact" if q == "tensor" else "within 2%"
        scope = "kernels with tensor work" if q == "tensor" else "kernels of >= 100 MB"
        pct = f" ({100 * n_ok / n:.1f}%)" if n else ""
        print(f"{q}: {n_ok}/{n} {scope} {crit}{pct}")
    total_o, total_r = sum(shares_ours.values()), sum(shares_ref.values())
    if total_o > 0 and total_r > 0:
        print("time shares by kernel (ours / reference, percentage points apart):")
        worst = 0.0
        for key, tr in shares_ref.most_common(10):
            so, sr = 100 * shares_ours[key] / total_o, 100 * tr / total_r
            worst = max(worst, abs(so - sr))
            print(f"  {key.split('::')[-1][:48]:48} {so:6.2f}% {sr:6.2f}%  {so - sr:+.2f}")
        print(f"largest share difference among the top 10: {worst:.2f} points")


if __name__ == "__main__":
    main()
