#!/usr/bin/env python3
"""Does the analytic model tell the same story as the counters?

Runs `cuflash-roofline run` twice over workloads outside the seed sweep (odd N, B > 1,
d 32/64/128, causal and not, fwd and bwd, N from 1 to 262144): once with counters and once
with --no-counters (bytes and FLOPs from the cache-aware model), then prints, per row, the
regime of each mode and the model's DRAM bytes against the counted ones.

Acceptance (exit 1 when it fails): the --no-counters regime equals the counted regime on every
row that ran, and the model's DRAM bytes are within 1.5x of the counted ones wherever those
exceed 10 MB.

    scripts/model_vs_counters.py --tool build/ci/app/cuflash-roofline --out DIR   # on a GPU
    scripts/model_vs_counters.py --reuse DIR                 # compare reports saved earlier
    scripts/model_vs_counters.py --reuse DIR --model TOOL    # counted reports against `model`

With --model, the second mode is `TOOL model --gpu SPEC` on the same workloads (no GPU needed;
the regime does not depend on time, so it equals that of `run --no-counters`).
"""
import argparse
import json
import os
import subprocess
import sys

# (name, batch, heads, head_dim, sequence lengths, kernels or None for all). Every group runs
# causal and non-causal, forward and backward.
GROUPS = [
    ("b2h12d128", 2, 12, 128, [1, 3000], None),
    ("b1h3d64", 1, 3, 64, [777, 5001], None),
    ("b4h16d32", 4, 16, 32, [2047, 8191], None),
    ("b3h5d64", 3, 5, 64, [12345], None),
    ("b8h4d64", 8, 4, 64, [1023], None),
    ("b1h1d64", 1, 1, 64, [65537], None),
    # standard cannot hold two 262144² matrices; flash-v1 would take minutes at this size.
    ("b1h1d128", 1, 1, 128, [262144], ["flash-v2"]),
]
KERNELS = ("standard", "flash-v1", "flash-v2")
LIMIT_BYTES = 10e6
LIMIT_RATIO = 1.5


def sweep_args(group):
    _, b, h, d, seqs, kernels = group
    args = ["--batch", str(b), "--heads", str(h), "--head-dim", str(d),
            "--seq", ",".join(map(str, seqs)), "--pass", "fwd,bwd"]
    if kernels:
        args += ["--kernel", ",".join(kernels)]
    return args


def run(cmd, log):
    with open(log, "w") as f:
        rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        sys.exit(f"{' '.join(cmd)} exited {rc}; see {log}")


def key(row):
    w = row["workload"]
    return (row["kernel"], w["batch"], w["heads"], w["seq_len"], w["head_dim"], w["causal"],
            w["pass"])


def label(row):
    w = row["workload"]
    return (f"B{w['batch']} H{w['heads']} N{w['seq_len']} d{w['head_dim']} "
            f"{'causal' if w['causal'] else 'full'} {w['pass']}")


def rows_of(path):
    with open(path) as f:
        report = json.load(f)
    return report, {key(r): r for r in report["rows"]}


def mb(x):
    return "-" if x is None else f"{x / 1e6:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tool", help="cuflash-roofline to run on the GPU")
    ap.add_argument("--out", help="folder for the reports and logs")
    ap.add_argument("--reuse", help="compare reports saved earlier in this folder")
    ap.add_argument("--model", help="second mode: this tool's `model` instead of --no-counters")
    ap.add_argument("--spec", default="h200", help="spec for --model (default h200)")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    folder = args.reuse or args.out
    if not folder or (not args.reuse and not args.tool):
        ap.error("give --tool and --out, or --reuse")
    os.makedirs(folder, exist_ok=True)

    if not args.reuse:
        for g in GROUPS:
            common = [args.tool, "run", *sweep_args(g), "--reps", str(args.reps), "--warmup", "1"]
            run(common + ["--counters", "--json", f"{folder}/counted_{g[0]}.json"],
                f"{folder}/counted_{g[0]}.log")
            run(common + ["--no-counters", "--json", f"{folder}/nocounters_{g[0]}.json"],
                f"{folder}/nocounters_{g[0]}.log")
    second = "nocounters"
    if args.model:
        second = "model"
        for g in GROUPS:
            run([args.model, "model", "--gpu", args.spec, *sweep_args(g), "--json",
                 f"{folder}/model_{g[0]}.json"], f"{folder}/model_{g[0]}.log")

    lines = []
    failures = 0
    checked = 0
    l1_only = 0
    workloads = set()
    header = ("workload", "kernel", "counted regime", f"{second} regime", "DRAM MB counted",
              "model", "no-reuse", "model/counted", "ok")
    for g in GROUPS:
        _, counted = rows_of(f"{folder}/counted_{g[0]}.json")
        _, other = rows_of(f"{folder}/{second}_{g[0]}.json")
        for k, row in counted.items():
            if row["kernel"] not in KERNELS:
                continue
            if row["status"] != "ok":
                lines.append((label(row), row["kernel"], row["status"], "", "", "", "", "", "skip"))
                continue
            o = other.get(k)
            c = row["counters"]
            counted_dram = c["dram_read_bytes"] + c["dram_write_bytes"]
            # The prediction of the second mode's binary (both modes predict the same bytes).
            model = (o or row)["model"]
            model_dram = model["dram_bytes"]
            no_reuse = model.get("no_reuse_dram_bytes")
            regime_c = row["analysis"]["regime"]
            regime_o = o["analysis"]["regime"] if o and o["status"] in ("ok", "counters_unavailable") else "missing"
            ratio = model_dram / counted_dram if counted_dram > 0 else float("inf")
            ok = regime_c == regime_o
            if not ok and row["analysis"]["binding"] == "L1":
                # The model has DRAM bytes only: say whether the regimes agree on DRAM alone.
                a = row["analysis"]
                dram = next(l for l in a["levels"] if l["level"] == "dram")
                on_dram = ("memory-bound (DRAM)"
                           if dram["attainable_tflops_per_second"]["value"] <
                           a["ceiling"]["peak_tflops"]["value"] * (1 - 1e-12)
                           else f"compute-bound ({a['ceiling']['label']})")
                if on_dram == regime_o:
                    l1_only += 1
                    regime_o += " [= counted on DRAM alone]"
            if counted_dram > LIMIT_BYTES:
                ok = ok and (1 / LIMIT_RATIO <= ratio <= LIMIT_RATIO)
            failures += not ok
            checked += 1
            workloads.add(k[1:])
            lines.append((label(row), row["kernel"], regime_c, regime_o, mb(counted_dram),
                          mb(model_dram), mb(no_reuse), f"{ratio:.2f}", "yes" if ok else "NO"))

    widths = [max(len(str(x[i])) for x in [header] + lines) for i in range(len(header))]
    for line in [header] + lines:
        print(" | ".join(str(x).ljust(widths[i]) for i, x in enumerate(line)))
    print(f"\n{len(workloads)} workloads, {checked} rows compared, {failures} failing "
          f"(regime must match; model DRAM within {LIMIT_RATIO}x where counted > "
          f"{LIMIT_BYTES / 1e6:.0f} MB)")
    if l1_only:
        print(f"{l1_only} of the failing rows bind on L1 in the counted regime and agree on DRAM "
              "alone (the model predicts no L1 bytes)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
