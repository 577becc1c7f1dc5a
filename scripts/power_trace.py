#!/usr/bin/env python3
"""The SM clock, board power and clock-event reasons (NVML, sampled every 2 ms) while flash-v3
runs a long `run --reps 150` and PyTorch's cuDNN and flash SDPA run back to back for 1.5 s, two
rounds per row: what the power cap does to each under sustained load.

    python3 scripts/power_trace.py BUILD/app/cuflash-roofline B:H:D:N:causal|full:fwd|bwd:fp16|bf16...

Prints one line per run: samples, SM clock median [min-max], power median and max, the energy
counter's watts over the window, the clock-event reason bits seen (0x4: SW power cap), TFLOP/s
(FlashAttention convention) and TFLOP per joule. Ours' window is that of the samples above 250 W
of the whole process (its flushes and set-up included), so its power and TFLOP/J are rough; the
PyTorch windows cover the timed loop alone. Never changes clocks.
Exit 2 (one line on stderr) for a malformed row, 3 without NVML.
"""
import ctypes
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import tempfile
import time

ROW = re.compile(r"^\d+:\d+:\d+:\d+:(causal|full):(fwd|bwd):(fp16|bf16)$")
if len(sys.argv) < 3 or not all(ROW.match(a) for a in sys.argv[2:]):
    print("power_trace: usage: power_trace.py TOOL B:H:D:N:causal|full:fwd|bwd:fp16|bf16...",
          file=sys.stderr)
    sys.exit(2)
try:
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
except ImportError:
    print("power_trace: needs PyTorch", file=sys.stderr)
    sys.exit(3)
try:
    nvml = ctypes.CDLL("libnvidia-ml.so.1")
except OSError:
    print("power_trace: no NVML (libnvidia-ml.so.1)", file=sys.stderr)
    sys.exit(3)
h = ctypes.c_void_p()
if nvml.nvmlInit_v2() != 0 or nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h)) != 0:
    print("power_trace: NVML has no GPU 0", file=sys.stderr)
    sys.exit(3)

def sample():
    mhz = ctypes.c_uint(); mw = ctypes.c_uint(); reasons = ctypes.c_ulonglong(); e = ctypes.c_ulonglong()
    nvml.nvmlDeviceGetClockInfo(h, 1, ctypes.byref(mhz))
    nvml.nvmlDeviceGetPowerUsage(h, ctypes.byref(mw))
    nvml.nvmlDeviceGetCurrentClocksEventReasons(h, ctypes.byref(reasons))
    nvml.nvmlDeviceGetTotalEnergyConsumption(h, ctypes.byref(e))
    return time.perf_counter(), mhz.value, mw.value / 1000.0, reasons.value, e.value / 1000.0

class Sampler:
    def __init__(self): self.s = []; self.stop = False
    def run(self):
        while not self.stop:
            self.s.append(sample()); time.sleep(0.002)
    def __enter__(self):
        self.t = threading.Thread(target=self.run); self.t.start(); return self
    def __exit__(self, *a):
        self.stop = True; self.t.join()

def summarize(label, s, t0=None, t1=None, flops_per_s=None):
    busy = [x for x in s if (t0 is None or t0 <= x[0] <= t1)]
    if not busy: print(label, "no samples"); return
    clocks = [x[1] for x in busy]; watts = [x[2] for x in busy]
    reasons = 0
    for x in busy: reasons |= x[3]
    energy = busy[-1][4] - busy[0][4]; dt = busy[-1][0] - busy[0][0]
    line = (f"{label:<44} samples {len(busy):4d} SM MHz median {statistics.median(clocks):6.0f} "
            f"[{min(clocks)}-{max(clocks)}]  W median {statistics.median(watts):5.0f} max {max(watts):5.0f} "
            f"energy/s {energy / dt if dt > 0 else float('nan'):5.0f} W  reasons 0x{reasons:x}")
    if flops_per_s: line += f"  {flops_per_s / 1e12:6.1f} TFLOP/s  {flops_per_s / 1e12 / (energy / dt):.3f} TFLOP/J"
    print(line, flush=True)

def torch_loop(backend, b, hh, n, d, causal, dtype, backward, seconds):
    dt = dict(fp16=torch.float16, bf16=torch.bfloat16)[dtype]
    g = torch.Generator(device="cuda").manual_seed(0)
    q, k, v, do = (torch.rand((b, hh, n, d), device="cuda", dtype=dt, generator=g) * 2 - 1 for _ in range(4))
    be = dict(cudnn=SDPBackend.CUDNN_ATTENTION, flash=SDPBackend.FLASH_ATTENTION)[backend]
    for t in (q, k, v): t.requires_grad_(backward)
    def fwd():
        with sdpa_kernel(be):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    if backward:
        out = fwd()
        fn = lambda: torch.autograd.grad(out, (q, k, v), do, retain_graph=True)
    else:
        fn = lambda: fwd()
    with torch.no_grad() if not backward else torch.enable_grad():
        for _ in range(3): fn()
        torch.cuda.synchronize()
        st = torch.cuda.Event(enable_timing=True); sp = torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter(); st.record(); iters = 0
        while time.perf_counter() - t0 < seconds:
            for _ in range(5): fn()
            iters += 5
            if iters % 20 == 0: torch.cuda.synchronize()
        sp.record(); sp.synchronize(); t1 = time.perf_counter()
    ms = st.elapsed_time(sp) / iters
    flops = 4.0 * b * hh * n * n * d * (0.5 if causal else 1.0) * (2.5 if backward else 1.0)
    return t0, t1, flops / (ms * 1e-3), ms

tool = sys.argv[1]
scratch = tempfile.TemporaryDirectory(prefix="power_trace_")  # removed at exit
report = os.path.join(scratch.name, "ours.json")
shapes = sys.argv[2:]
for spec in shapes:
    b, hh, d, n, mask, pas, dtype = spec.split(":")
    b, hh, d, n = int(b), int(hh), int(d), int(n)
    causal = mask == "causal"; backward = pas == "bwd"
    flops = 4.0 * b * hh * n * n * d * (0.5 if causal else 1.0) * (2.5 if backward else 1.0)
    for rnd in (1, 2):
        # ours: a long --reps loop; the samples while the loop runs (power above 250 W)
        with Sampler() as smp:
            t0 = time.perf_counter()
            subprocess.run([tool, "run", "--no-counters", "--reps", "150", "--kernel", "flash-v3", "--batch", str(b),
                            "--heads", str(hh), "--head-dim", str(d), "--seq", str(n), "--causal" if causal else "--no-causal",
                            "--pass", pas, "--dtype", dtype, "--json", report], check=True,
                           stdout=subprocess.DEVNULL)
            t1 = time.perf_counter()
        row = json.load(open(report))["rows"][0]
        med = row["timing"]["median_seconds"]
        hot = [x for x in smp.s if x[2] > 250]
        summarize(f"{spec} ours r{rnd} (clock after {row['timing'].get('sm_clock_after_mhz')})", hot, flops_per_s=flops / med)
        for backend in ("cudnn", "flash"):
            with Sampler() as smp:
                a, z, fps, ms = torch_loop(backend, b, hh, n, d, causal, dtype, backward, 1.5)
            summarize(f"{spec} {backend} r{rnd}", smp.s, a + 0.2, z, flops_per_s=fps)
            torch.cuda.empty_cache()
        time.sleep(1.0)
