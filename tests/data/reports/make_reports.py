#!/usr/bin/env python3
"""Regenerates the recorded report fixtures in this directory (see README.md).

    python3 tests/data/reports/make_reports.py BUILD/app/cuflash-roofline

The rows, the embedded spec and the model block come from the tool's own `model` output; this
script turns them into what `run` would have written on an H100 SXM5: device context,
per-repetition timing samples (seeded noise) and counters derived from the model with the
factors a profiled FlashAttention-style kernel shows (K/V reloads served by L2, so DRAM sees
about the compulsory bytes). The derived `analysis` blocks are left out: readers recompute them.
Deterministic: the same binary gives the same files.
"""
import copy
import json
import math
import random
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEQ = [1024, 4096, 8192, 16384]
SAMPLES = 15

H100_DEVICE = {
    "name": "NVIDIA H100 80GB HBM3", "chip": "GH100", "compute_capability": "9.0",
    "sm_count": 132, "memory_bytes": 84929347584, "l2_cache_bytes": 52428800,
    "driver_version": "560.35.03", "runtime_version": "12.6",
}
A100_DEVICE = {
    "name": "NVIDIA A100-SXM4-80GB", "chip": "GA100", "compute_capability": "8.0",
    "sm_count": 108, "memory_bytes": 85094301696, "l2_cache_bytes": 41943040,
    "driver_version": "560.35.03", "runtime_version": "12.6",
}
METRICS = [
    "gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "dram__bytes_read.sum",
    "dram__bytes_write.sum", "lts__t_sectors_srcunit_tex.sum", "l1tex__t_bytes.sum",
    "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum",
    "sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
]


def model_report(binary, gpu, kernels):
    out = subprocess.run(
        [binary, "model", "--gpu", gpu, "--seq", ",".join(map(str, SEQ)), "--kernel",
         ",".join(kernels), "--json", "-"],
        check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    for row in report["rows"]:
        row.pop("analysis", None)
    return report


def efficiency(kernel, n, causal):
    """Fraction of the mma.sync peak a kernel reaches (small N leaves SMs idle)."""
    base = {1024: 0.22, 4096: 0.42, 8192: 0.48, 16384: 0.50}[n]
    if causal:
        base *= 0.85
    return base * (0.65 if kernel == "flash-v1" else 1.0)


def median_time(row, gpu, clock_mhz):
    w, m = row["workload"], row["model"]
    if row["kernel"] == "standard":
        # cuBLAS GEMMs plus the N×N matrices through DRAM at ~80% of its bandwidth.
        t = m["dram_bytes"] / (0.8 * gpu["dram"]) + m["flops"] / (0.6 * gpu["gemm_peak"])
    else:
        t = m["flops"] / (efficiency(row["kernel"], w["seq_len"], w["causal"]) * gpu["mma_peak"])
    return t * gpu["boost_mhz"] / clock_mhz


def counters(row, sm_clock_hz, median):
    w, m = row["workload"], row["model"]
    softmax = 5.0 * w["batch"] * w["heads"] * w["seq_len"] ** 2 * (0.5 if w["causal"] else 1.0)
    compulsory = m["compulsory_dram_bytes"]
    c = {"gpu_time_seconds": median * 1.004, "sm_clock_hz": sm_clock_hz,
         "dram_read_bytes": round(0.75 * compulsory * 1.03),
         "dram_write_bytes": round(0.25 * compulsory * 1.01)}
    if row["kernel"] == "standard":
        c["dram_read_bytes"] = round(0.5 * m["dram_bytes"] * 0.95)
        c["dram_write_bytes"] = round(0.5 * m["dram_bytes"] * 0.95)
        c["l2_bytes"] = round(m["dram_bytes"] * 1.2)
        c["tensor_wgmma_flops"] = m["flops"] - softmax
        c["tensor_mma_sync_flops"] = 0.0
        c["fp32_flops"] = softmax
    else:
        c["l2_bytes"] = round(m["dram_bytes"] * 1.05)
        c["tensor_mma_sync_flops"] = m["flops"]
        c["tensor_wgmma_flops"] = 0.0
        c["fp32_flops"] = round(softmax * 1.1)
    c["l1_bytes"] = round(c["l2_bytes"] * 1.1)
    return c


H100 = {"dram": 3350e9, "mma_peak": 713.7e12, "gemm_peak": 989.4e12, "boost_mhz": 1980.0}
A100 = {"dram": 2039e9, "mma_peak": 312e12, "gemm_peak": 312e12, "boost_mhz": 1410.0}


def measure(report, device, seed, gpu=H100, clock_mhz=1980.0, tweaks=None):
    """Turns a model report into a run report. tweaks: {(kernel, N, causal): dict}."""
    rng = random.Random(seed)
    report = copy.deepcopy(report)
    report["context"].update({
        "command": "run", "host": "gpu-runner-07", "device": device,
        "counters": "cupti range profiler, 3 passes, one range per launch",
        "metrics": METRICS, "counter_passes": 3})
    for row in report["rows"]:
        w = row["workload"]
        tweak = (tweaks or {}).get((row["kernel"], w["seq_len"], w["causal"]), {})
        median = median_time(row, gpu, clock_mhz) * tweak.get("time", 1.0)
        noise = tweak.get("noise", 0.006)
        samples = [median * math.exp(rng.gauss(0.0, noise))
                   for _ in range(tweak.get("samples", SAMPLES))]
        if rng.random() < 0.3:  # an occasional slow repetition, as real runs have
            samples[rng.randrange(len(samples))] *= 1.0 + rng.uniform(0.01, 0.04)
        row["timing"] = {"samples_seconds": [float("%.6g" % s) for s in samples],
                         "sm_clock_before_mhz": clock_mhz, "sm_clock_after_mhz": clock_mhz - 15}
        row["counters"] = counters(row, clock_mhz * 1e6 - rng.uniform(0, 2e7), median)
        for key, factor in tweak.get("counters", {}).items():
            row["counters"][key] = round(row["counters"][key] * factor)
    return report


def write(name, report):
    (HERE / name).write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")


def main():
    binary = sys.argv[1]
    kernels = ["standard", "flash-v1", "flash-v2"]
    model = model_report(binary, "h100-sxm5", kernels)
    model["context"]["host"] = "ci"
    model["context"]["time_utc"] = "2026-11-20T09:00:00Z"

    base = measure(model, H100_DEVICE, seed=1)
    base["context"]["time_utc"] = "2026-11-20T09:14:03Z"
    regressions = {
        ("flash-v2", 4096, True): {"time": 1.09},                       # slower
        ("flash-v1", 16384, True): {"counters": {"dram_read_bytes": 1.16}},  # more bytes
    }
    changes = {
        ("flash-v2", 8192, False): {"time": 0.88},                      # faster
        ("flash-v2", 16384, False): {"time": 0.87},                     # faster
        ("flash-v2", 1024, False): {"time": 1.07, "noise": 0.05, "samples": 6},  # noisy
        ("standard", 4096, False): {"time": 1.02},                      # small but real
    }
    head = measure(model, H100_DEVICE, seed=12, tweaks={**changes, **regressions})
    head["context"]["time_utc"] = "2026-11-21T10:02:41Z"
    improved = measure(model, H100_DEVICE, seed=12, tweaks=changes)
    improved["context"]["time_utc"] = "2026-11-21T10:02:41Z"

    write("model.json", model)
    write("base.json", base)
    write("head.json", head)
    write("head_improved.json", improved)

    # Incompatible variants: a few rows are enough.
    def subset(report, kernel):
        out = copy.deepcopy(report)
        out["rows"] = [r for r in out["rows"] if r["kernel"] == kernel]
        return out

    a100_model = model_report(binary, "a100-sxm4-80gb", ["flash-v2"])
    write("head_a100.json", measure(a100_model, A100_DEVICE, seed=3, gpu=A100, clock_mhz=1410.0))
    write("head_low_clock.json",
          subset(measure(model, H100_DEVICE, seed=4, clock_mhz=1590.0), "flash-v2"))
    empty = subset(base, "flash-v2")
    empty["rows"] = []
    write("empty.json", empty)
    v2 = subset(base, "flash-v2")
    v2["schema_version"] = 2
    write("schema_v2.json", v2)


if __name__ == "__main__":
    main()
