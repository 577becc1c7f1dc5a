#!/usr/bin/env python3
"""Benchmark table: the bundled kernels (from cuflash-roofline JSON reports) beside PyTorch's
scaled_dot_product_attention (flash and cuDNN backends) and PyTorch's unfused
matmul-softmax-matmul, timed in the same process run on the same GPU.

    python3 scripts/bench_vs_pytorch.py REPORT.json... [--reps 10] [--torch flash,cudnn,unfused]
        [--dtype fp16|bf16] [--settle SECONDS]

Each row's PyTorch timings use that row's dtype (the report's `workload.dtype`, FP16 for reports
that predate it); --dtype keeps the rows of one dtype only. TFLOP/s use the FlashAttention convention (4·B·H·N²·d forward, halved when causal, backward
2.5×). Every PyTorch timing flushes L2 before each repetition and takes the median, as the
tool does; --settle S first runs it so for S seconds, as `run --settle S` does ours, so that both
are timed in the power state they set themselves. Prints a table; asserts nothing. --json also
records, per PyTorch timing, the median SM clock (NVML, sampled every millisecond while the
timed repetitions ran) and why the board held the clock down then, as the tool's reports do
(`sm_clock_timed_mhz`, `clock_limit`).
"""
import argparse
import ctypes
import json
import math
import statistics
import sys
import threading
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def fa_flops(b, h, n, d, causal, backward):
    f = 4.0 * b * h * n * n * d * (0.5 if causal else 1.0)
    return f * 2.5 if backward else f


def unfused(q, k, v, causal):
    scale = 1.0 / math.sqrt(q.shape[-1])
    s = torch.matmul(q, k.transpose(-2, -1)) * scale
    if causal:
        n = q.shape[-2]
        mask = torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1)
        s = s.masked_fill(mask, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return torch.matmul(p, v)


def median_ms(fn, reps, flush, settle=0.0, sampler=None):
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    fn()  # warm-up
    fn()
    until = time.perf_counter() + settle
    while time.perf_counter() < until:  # --settle: as timed, for that long
        flush.zero_()
        fn()
        torch.cuda.synchronize()
    times = []
    if sampler:
        sampler.start()
    for _ in range(reps):
        flush.zero_()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    if sampler:
        sampler.stop()
    return statistics.median(times)


TORCH_DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


def nvml_device():
    """NVML and its handle of the GPU PyTorch times on (CUDA device 0, found by its PCI bus id,
    as the tool finds its own; NVML's device 0 where PyTorch does not give the id); None without
    NVML."""
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return None
    handle = ctypes.c_void_p()
    props = torch.cuda.get_device_properties(0)
    bus = getattr(props, "pci_bus_id", None)
    if nvml.nvmlInit_v2() != 0:
        return None
    if bus is not None:
        found = nvml.nvmlDeviceGetHandleByPciBusId_v2(
            b"%08x:%02x:%02x.0" % (getattr(props, "pci_domain_id", 0), bus,
                                   getattr(props, "pci_device_id", 0)), ctypes.byref(handle)) == 0
    else:
        found = nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle)) == 0
    return (nvml, handle) if found else None


class ClockSampler:
    """The SM clock every millisecond on a thread of its own between start() and stop(), and the
    clock-event reasons seen (the tool's lib/gpu/clock_sampler.cpp does the same for its own
    timings). Records nothing without NVML."""
    POWER = 0x4 | 0x80         # SW power cap, HW power brake
    HEAT = 0x8 | 0x20 | 0x40   # HW slowdown, SW thermal, HW thermal

    def __init__(self, device):
        self.device = device
        self.clocks, self.reasons, self.reasons_known = [], 0, False
        self.thread, self.running = None, False

    def sample(self):
        nvml, handle = self.device
        mhz, bits = ctypes.c_uint(), ctypes.c_ulonglong()
        if nvml.nvmlDeviceGetClockInfo(handle, 1, ctypes.byref(mhz)) == 0:  # NVML_CLOCK_SM
            self.clocks.append(mhz.value)
        if nvml.nvmlDeviceGetCurrentClocksEventReasons(handle, ctypes.byref(bits)) == 0:
            self.reasons |= bits.value
            self.reasons_known = True

    def run(self):
        while self.running:
            self.sample()
            time.sleep(0.001)

    def start(self):
        if self.device:
            self.running = True
            self.thread = threading.Thread(target=self.run, daemon=True)
            self.thread.start()

    def stop(self):
        if self.thread:
            self.running = False
            self.thread.join()
            self.thread = None
            self.sample()  # one sample at least, however short the loop

    def median_mhz(self):
        return statistics.median(self.clocks) if self.clocks else None

    def limit(self):
        if not self.reasons_known:
            return None
        power, heat = self.reasons & self.POWER, self.reasons & self.HEAT
        return ("power cap, thermal" if power and heat else "power cap" if power else
                "thermal" if heat else "none")


def time_torch(impl, b, h, n, d, causal, backward, dtype, reps, flush, settle=0.0, sampler=None):
    gen = torch.Generator(device="cuda").manual_seed(0)
    shape = (b, h, n, d)
    q, k, v, do = (torch.rand(shape, device="cuda", dtype=TORCH_DTYPES[dtype], generator=gen) * 2 - 1
                   for _ in range(4))
    for t in (q, k, v):
        t.requires_grad_(backward)

    def forward():
        if impl == "unfused":
            return unfused(q, k, v, causal)
        backend = SDPBackend.FLASH_ATTENTION if impl == "flash" else SDPBackend.CUDNN_ATTENTION
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    try:
        if not backward:
            with torch.no_grad():
                return median_ms(forward, reps, flush, settle, sampler)
        out = forward()
        return median_ms(lambda: torch.autograd.grad(out, (q, k, v), do, retain_graph=True),
                         reps, flush, settle, sampler)
    except torch.cuda.OutOfMemoryError:
        return "OOM"
    except RuntimeError as error:  # backend not available for this shape
        return "n/a: " + str(error).splitlines()[0][:40]
    finally:
        if sampler:
            sampler.stop()  # when the timing failed half-way
        torch.cuda.empty_cache()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+")
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--json", help="write the table as JSON here")
    parser.add_argument("--torch", default="flash,cudnn,unfused",
                        help="PyTorch implementations to time (others print '-')")
    parser.add_argument("--dtype", choices=sorted(TORCH_DTYPES),
                        help="only the report rows of this dtype (default: every row, each "
                             "timed in its own dtype)")
    parser.add_argument("--settle", type=float, default=0.0,
                        help="seconds each PyTorch timing first runs as timed (default 0)")
    args = parser.parse_args()
    if not (math.isfinite(args.settle) and 0 <= args.settle <= 60):
        parser.error("--settle takes seconds from 0 to 60")

    ours = {}
    for path in args.reports:
        for row in json.load(open(path))["rows"]:
            w = row["workload"]
            dtype = w.get("dtype", "fp16")
            if args.dtype and dtype != args.dtype:
                continue
            key = (w["batch"], w["heads"], w["head_dim"], w["seq_len"], w["causal"], w["pass"],
                   dtype)
            t = row["timing"]
            ours.setdefault(key, {})[row["kernel"]] = (
                t["median_seconds"] * 1e3 if t and row["status"] in ("ok", "counters_unavailable")
                else row["status"])

    device = nvml_device()
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2 // 4, dtype=torch.float32, device="cuda")
    kernels = ["standard", "flash-v1", "flash-v2", "flash-v3"]
    torch_impls = ["flash", "cudnn", "unfused"]
    chosen = set(args.torch.split(","))
    if not chosen <= set(torch_impls):
        parser.error("--torch takes a list of: " + ",".join(torch_impls))
    header = ["B", "H", "d", "N", "causal", "pass", "dtype"] + kernels + ["torch-" + i for i in torch_impls] + [
        "v2/flash", "v3/cudnn", "std/unfused"]
    print("TFLOP/s (FlashAttention convention), median of %d; %s" %
          (args.reps, torch.cuda.get_device_name(0)))
    print("  ".join("%9s" % h for h in header))
    table = []
    for key in sorted(ours, key=lambda k: (k[6], k[0], k[5], k[4], k[3])):
        b, h, d, n, causal, pas, dtype = key
        backward = pas == "bwd"
        flops = fa_flops(b, h, n, d, causal, backward)
        cells = {}
        clocks, limits = {}, {}
        for kernel in kernels:
            cells[kernel] = ours[key].get(kernel, "-")
        for impl in torch_impls:
            if impl not in chosen:
                cells["torch-" + impl] = "-"
                continue
            sampler = ClockSampler(device)
            cells["torch-" + impl] = time_torch(impl, b, h, n, d, causal, backward, dtype,
                                                args.reps, flush, args.settle, sampler)
            clocks["torch-" + impl] = sampler.median_mhz()
            limits["torch-" + impl] = sampler.limit()
        rates = {name: (flops / (ms * 1e-3) / 1e12 if isinstance(ms, float) else ms)
                 for name, ms in cells.items()}

        def ratio(a, b_):
            ra, rb = rates.get(a), rates.get(b_)
            return ra / rb if isinstance(ra, float) and isinstance(rb, float) else "-"

        row = [b, h, d, n, "yes" if causal else "no", pas, dtype] + [rates[k] for k in kernels] + [
            rates["torch-" + i] for i in torch_impls] + [ratio("flash-v2", "torch-flash"),
                                                         ratio("flash-v3", "torch-cudnn"),
                                                         ratio("standard", "torch-unfused")]
        table.append({"workload": key, "ms": cells, "tflops": rates,
                      "sm_clock_timed_mhz": clocks, "clock_limit": limits})
        print("  ".join(("%9.1f" % c if isinstance(c, float) and c >= 10 else
                         "%9.2f" % c if isinstance(c, float) else "%9s" % str(c)[:9]) for c in row))
        sys.stdout.flush()
    if args.json:
        json.dump(table, open(args.json, "w"), indent=1, default=str)


if __name__ == "__main__":
    main()
