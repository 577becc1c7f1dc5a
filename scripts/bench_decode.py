#!/usr/bin/env python3
"""Decode benchmark table: the decode rows (flash-decode) of cuflash-roofline JSON reports, the DRAM
bandwidth each reached against the bandwidth `calibrate` measured, beside PyTorch's
scaled_dot_product_attention on the same shape, timed in this process on the same GPU.

    python3 scripts/bench_decode.py REPORT.json... --calibration CAL.json [--reps 10]
        [--backends flash,efficient,cudnn,math] [--no-torch] [--json OUT.json]

Ours, per row: the median of the row's timing samples; DRAM bytes as the counters counted them
(`counters.dram_read_bytes + dram_write_bytes`, as model_vs_counters.py reads them; a row without
counters shows the model's `model.dram_bytes`, marked ~); GB/s = bytes / median time; and that
as a share of the calibration's DRAM read bandwidth: the fastest of its read-only DRAM
measurements (`dram_read`, the 16-byte load stream; `dram_read_bulk`, TMA bulk copies on Hopper;
work / median of its samples), or, in a file without one, its `memory_levels` DRAM entry (the
best of the read-only and copy streams).

Where the calibration has the DRAM level's stream curve (`calibrate`'s pure read of 4 MiB to 1 GiB,
one pass each, no compute, timed as `run` times a launch), `% stream` is the time that read takes
for the row's DRAM bytes over the row's: how close the row is to what reading its bytes alone
takes. The read's time for N bytes is the tool's own (lib/core/domain/stream_floor.hpp): linear
in bytes between the measured sizes, from the origin below the first, past the last the rest at
the DRAM level's bandwidth. Its share of the read bandwidth (`stream % BW`) is the most any kernel
reading that many bytes once can reach, and the bound the advice puts on such a row's gain.

Acceptance (issue 41), printed and never asserted: at least 90% of the read bandwidth where the
cache is at least 8192 tokens and the batch at least 8, at least 80% at batch 1 with 32768 tokens
or more. It applies to rows with one cache length for every sequence (not --kv-lens) and with
split-KV not turned off (kv_splits other than 1: the batch-1 target needs the split). Each row
below its target is listed under the tally: its time, the time the target asks for, and a pure
read of its bytes (short of the target itself, or how much faster than the row).

PyTorch, per row: q [B, Hq, q_len, d] and k, v [B, Hkv, N, d], contiguous, in the row's dtype
(uniform in [-1, 1]); torch.nn.functional.scaled_dot_product_attention(q, k, v, ...,
enable_gqa=True where Hq != Hkv) under each backend of torch.nn.attention.sdpa_kernel
(FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION, MATH); a backend that refuses the shape
is `n/a` (the --json keeps PyTorch's reason), one out of memory `OOM`. Timed as
bench_vs_pytorch.py times (its median_ms: two warm-up calls, L2 flushed before each repetition,
CUDA events, median of --reps). The fastest backend names the last two columns: its time and our
speedup over it (its time / ours).

Masks: a non-causal row has none. A causal row with q_len 1 has none either: the one new token
is the last position and sees every key (is_causal=True would align the mask top-left and hide
all keys but the first). A causal row with q_len > 1: the new tokens are the LAST q_len
positions, so the mask is aligned bottom-right (new token i sees keys 0 .. N - q_len + i), which
is_causal=True (top-left) gets wrong. FLASH and EFFICIENT get
torch.nn.attention.bias.causal_lower_right(q_len, N): their kernels take that mask themselves
(flash's causal is bottom-right; efficient's custom mask type), and CausalBias picks them only
where the sdpa_kernel context allows them. CUDNN and MATH get the same mask as a boolean attn_mask
[q_len, N] (True = attend), built once outside the timed region (CausalBias would materialise it
inside every call for them).

Ragged rows (workload.kv_lens): a dense PyTorch batch has one length, so each sequence is run
alone with its own length (batch 1, one call after another; one L2 flush before the set, the
events around all of them) and the sum is the PyTorch time (launch overheads included: an upper
bound on what PyTorch needs). Paged rows (page_size > 0): SDPA has no paged cache; PyTorch runs
on the contiguous cache of the same shape. The `torch on` column says which. kv_splits does not
change PyTorch's problem: rows that differ only in it share one PyTorch timing.

Prints a markdown table on stdout; --json also writes the rows. Asserts nothing: exits 0, or 2 with
one line on stderr when a report or the calibration cannot be read. Without PyTorch or a GPU
(or with --no-torch) the PyTorch columns read `-`.
"""
import argparse
import json
import os
import statistics
import sys
import warnings

BACKENDS = ["flash", "efficient", "cudnn", "math"]
RUNNABLE = ("ok", "counters_unavailable")  # statuses whose timing is a measurement


class InputError(Exception):
    pass


def load_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as error:
        raise InputError(f"cannot read {what} {path}: {error}") from error


def read_bandwidth(path):
    """(GB/s, where it came from, device name, stream) of the calibration's DRAM read bandwidth;
    stream: (the DRAM level's stream curve [(bytes, seconds)] by bytes, its bandwidth in GB/s),
    or None when the file has none."""
    cal = load_json(path, "calibration")
    if not isinstance(cal, dict) or cal.get("format") != "cuflash-roofline calibration":
        raise InputError(f"{path} is not a calibration file (written by `cuflash-roofline "
                         f"calibrate`)")
    device = (cal.get("device") or {}).get("name", "?")
    measurements = [m for m in cal.get("measurements") or [] if isinstance(m, dict)]
    # Every read-only DRAM kernel (dram_read's 16-byte loads, dram_read_bulk's TMA copies on
    # Hopper): the highest rate is the ceiling, as calibrate keeps it for its DRAM roof.
    # (A stream measurement, one pass of one size, is a point of the stream curve, not a rate.)
    chosen = [m for m in measurements
              if m.get("target") == "dram" and not m.get("stream_of")
              and ("read only" in str(m.get("method", ""))
                   or str(m.get("id", "")).startswith("dram_read"))]
    stream = None
    for level in cal.get("memory_levels") or []:
        if isinstance(level, dict) and level.get("level") == "dram" and level.get("stream"):
            points = sorted((p["bytes"], p["seconds"]) for p in level["stream"]
                            if isinstance(p, dict) and number(p.get("bytes"))
                            and number(p.get("seconds")))
            if points and number(level.get("bandwidth_gbps")):
                stream = (points, level["bandwidth_gbps"])
    best = None
    for m in chosen:
        samples = [s for s in m.get("samples_seconds") or [] if isinstance(s, (int, float))]
        work = m.get("work")
        if samples and isinstance(work, (int, float)) and statistics.median(samples) > 0:
            gbps = work / statistics.median(samples) / 1e9
            if best is None or gbps > best[0]:
                best = (gbps, f"`calibrate`'s {m.get('id')} ({m.get('method', '')})", device,
                        stream)
    if best:
        return best
    for level in cal.get("memory_levels") or []:
        if isinstance(level, dict) and level.get("level") == "dram":
            gbps = level.get("bandwidth_gbps")
            if isinstance(gbps, (int, float)) and gbps > 0:
                return (gbps, "its memory_levels DRAM entry (no dram_read measurement)", device,
                        stream)
    raise InputError(f"{path} has no DRAM bandwidth (no dram_read measurement, no memory_levels "
                     f"DRAM entry)")


def stream_seconds(stream, nbytes):
    """A pure read's time for nbytes on the stream curve, as lib/core/domain/stream_floor.cpp
    reads it: linear between the measured sizes around it, from (0, 0) below the first, past the
    last that point's time plus the rest at the level's bandwidth."""
    points, gbps = stream
    below = (0.0, 0.0)
    for b, t in points:
        if nbytes <= b:
            return below[1] + (t - below[1]) * (nbytes - below[0]) / (b - below[0])
        below = (b, t)
    return below[1] + (nbytes - below[0]) / (gbps * 1e9)


def decode_rows(path):
    """(report device name, [row]) of one report's decode rows (those with workload.q_len)."""
    report = load_json(path, "report")
    if not isinstance(report, dict) or not isinstance(report.get("rows"), list):
        raise InputError(f"{path} is not a cuflash-roofline report (no rows)")
    device = ((report.get("context") or {}).get("device") or {}).get("name")
    rows = [r for r in report["rows"]
            if isinstance(r, dict) and isinstance(r.get("workload"), dict)
            and r["workload"].get("q_len")]
    return device, rows


def number(value):
    return value if isinstance(value, (int, float)) and value == value else None


def ours(row):
    """(median seconds or None, DRAM bytes or None, 'counted'|'model'|None) of one row."""
    timing = row.get("timing") or {}
    seconds = number(timing.get("median_seconds")) if row.get("status") in RUNNABLE else None
    counters = row.get("counters") or {}
    read, write = number(counters.get("dram_read_bytes")), number(counters.get("dram_write_bytes"))
    if read is not None:
        return seconds, read + (write or 0.0), "counted"
    model = number((row.get("model") or {}).get("dram_bytes"))
    return seconds, model, "model" if model is not None else None


def target_of(w):
    """The acceptance share of the read bandwidth for this workload, or None."""
    if w.get("kv_lens") or w.get("kv_splits") == 1:
        return None
    n, b = w["seq_len"], w["batch"]
    if n >= 8192 and b >= 8:
        return 0.90
    if b == 1 and n >= 32768:
        return 0.80
    return None


def shape_text(w):
    """A workload as `run` names it: "B8 H32/8 Q1 KV8192 d64", then what differs from the plain
    sweep (dtype, causal, page size, split count)."""
    extra = [w["dtype"]] if w.get("dtype", "fp16") != "fp16" else []
    extra += ["causal"] if w["causal"] else []
    extra += [f"paged {w['page_size']}"] if w.get("page_size") else []
    extra += [f"splits {w['kv_splits']}"] if w.get("kv_splits") else []
    return (f"B{w['batch']} H{w['heads']}/{w.get('kv_heads') or w['heads']} Q{w['q_len']} "
            f"KV{w['seq_len']} d{w['head_dim']}" + "".join(" " + e for e in extra))


def shape_order(w):
    """The table's order: the plain sweep first (FP16, q_len 1, full, contiguous, one length), by
    d, Hkv, B, KV; split-KV off beside chosen; then the variants."""
    return (w.get("dtype", "fp16") != "fp16", w["q_len"], bool(w["causal"]),
            bool(w.get("kv_lens")), w.get("page_size") or 0, w["head_dim"],
            -(w.get("kv_heads") or w["heads"]), w["heads"], w["batch"], w["seq_len"],
            w.get("kv_splits") or 0)


def torch_shape(w):
    """The PyTorch problem of a decode workload: rows that differ in kv_splits or page_size
    share it."""
    q_len = w["q_len"]
    lens = tuple(w["kv_lens"]) if w.get("kv_lens") else None
    return (w["batch"], w["heads"], w.get("kv_heads") or w["heads"], q_len, w["seq_len"], lens,
            w["head_dim"], w.get("dtype", "fp16"), bool(w["causal"]) and q_len > 1)


class TorchBench:
    """PyTorch's SDPA backends on decode shapes, each shape timed once."""

    def __init__(self, reps, backends):
        import torch  # here, so that the table of ours needs no PyTorch
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
        from torch.nn.attention.bias import causal_lower_right
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from bench_vs_pytorch import median_ms  # the prefill table's timing, unchanged

        if not torch.cuda.is_available():
            raise RuntimeError("PyTorch sees no CUDA device")
        self.torch, self.F, self.sdpa_kernel = torch, F, sdpa_kernel
        self.causal_lower_right, self.median_ms = causal_lower_right, median_ms
        self.backends = {"flash": SDPBackend.FLASH_ATTENTION,
                         "efficient": SDPBackend.EFFICIENT_ATTENTION,
                         "cudnn": SDPBackend.CUDNN_ATTENTION, "math": SDPBackend.MATH}
        self.chosen = backends
        self.reps = reps
        self.dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16}
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        self.flush = torch.empty(2 * l2 // 4, dtype=torch.float32, device="cuda")
        self.done = {}
        self.device = torch.cuda.get_device_name(0)
        self.version = torch.__version__

    def time(self, w):
        """{backend: milliseconds | 'n/a' | 'OOM' | '-'}, {backend: why not}, for workload w."""
        key = torch_shape(w)
        if key not in self.done:
            self.done[key] = self.measure(*key)
        return self.done[key]

    def measure(self, b, hq, hkv, q_len, n, lens, d, dtype, causal):
        torch, F = self.torch, self.F
        times = {name: "-" for name in BACKENDS}
        reasons = {}
        dt = self.dtypes[dtype]
        gen = torch.Generator(device="cuda").manual_seed(0)

        def tensor(*shape):
            t = torch.empty(shape, dtype=dt, device="cuda")
            return t.uniform_(-1, 1, generator=gen)

        parts = []
        try:
            # One (q, k, v) per call: the whole batch, or each ragged sequence alone.
            for length, batch in ([(m, 1) for m in lens] if lens else [(n, b)]):
                parts.append((tensor(batch, hq, q_len, d), tensor(batch, hkv, length, d),
                              tensor(batch, hkv, length, d)))
            masks = {}
            if causal:  # bottom-right: new token i sees keys 0 .. length - q_len + i
                for _, k, _ in parts:
                    length = k.shape[2]
                    masks[length] = torch.ones(q_len, length, dtype=torch.bool,
                                               device="cuda").tril(diagonal=length - q_len)
        except torch.cuda.OutOfMemoryError:
            parts = None
        extra = {"enable_gqa": True} if hq != hkv else {}  # older PyTorch lacks the keyword
        for name in self.chosen:
            if parts is None:
                times[name], reasons[name] = "OOM", "the inputs do not fit"
                continue

            def call(name=name):
                for q, k, v in parts:
                    mask = {}
                    if causal:
                        length = k.shape[2]
                        mask["attn_mask"] = (self.causal_lower_right(q_len, length)
                                             if name in ("flash", "efficient") else masks[length])
                    F.scaled_dot_product_attention(q, k, v, **mask, **extra)

            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    with self.sdpa_kernel(self.backends[name]), torch.no_grad():
                        times[name] = self.median_ms(call, self.reps, self.flush)
                except torch.cuda.OutOfMemoryError:
                    times[name], reasons[name] = "OOM", "out of memory"
                except (RuntimeError, TypeError, ValueError) as error:
                    times[name] = "n/a"
                    why = [str(error).strip().splitlines()[0]] if str(error).strip() else []
                    why += [str(c.message).strip().splitlines()[0] for c in caught
                            if str(c.message).strip()][:3]
                    reasons[name] = "; ".join(why)[:400]
            torch.cuda.synchronize()
        del parts
        torch.cuda.empty_cache()
        return times, reasons


def fmt(value, digits=1):
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return "-" if value is None else str(value)


def us_text(us):
    return "-" if us is None else f"{us:.0f}" if us >= 1000 else f"{us:.1f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", help="cuflash-roofline run --json reports")
    parser.add_argument("--calibration", required=True,
                        help="cuflash-roofline calibrate -o FILE: the DRAM read bandwidth")
    parser.add_argument("--reps", type=int, default=10, help="PyTorch repetitions (median)")
    parser.add_argument("--backends", default=",".join(BACKENDS),
                        help="PyTorch SDPA backends to time (others print '-')")
    parser.add_argument("--no-torch", action="store_true", help="our columns only")
    parser.add_argument("--json", help="write the rows as JSON here")
    args = parser.parse_args()
    chosen = [b for b in args.backends.split(",") if b]
    if not chosen or not set(chosen) <= set(BACKENDS):
        parser.error("--backends takes a list of: " + ",".join(BACKENDS))
    if args.reps < 1:
        parser.error("--reps takes a positive count")

    try:
        read_gbps, read_source, cal_device, stream = read_bandwidth(args.calibration)
        inputs = [(path, *decode_rows(path)) for path in args.reports]
    except InputError as error:
        print(f"bench_decode.py: {error}", file=sys.stderr)
        sys.exit(2)

    bench = None
    if not args.no_torch:
        try:
            bench = TorchBench(args.reps, chosen)
        except (ImportError, RuntimeError) as error:
            print(f"bench_decode.py: PyTorch not timed: {error}", file=sys.stderr)
    devices = {device for _, device, _ in inputs if device}
    if bench and devices and devices != {bench.device}:
        print(f"bench_decode.py: the reports ran on {', '.join(sorted(devices))}, PyTorch runs on "
              f"{bench.device}", file=sys.stderr)

    print(f"DRAM read bandwidth {read_gbps:.0f} GB/s ({read_source}, {cal_device}, "
          f"{args.calibration}).")
    if bench:
        print(f"PyTorch {bench.version} on {bench.device}: median of {args.reps}, L2 flushed "
              f"before each repetition; times in µs.")
    else:
        print("PyTorch not timed; times in µs.")
    if stream:
        print("A pure read of each size (the calibration's DRAM stream curve): "
              + ", ".join(f"{b / 1e6:.0f} MB {t * 1e6:.1f} µs ({100 * b / t / 1e9 / read_gbps:.1f}%)"
                          for b, t in stream[0]) + ".")
    print()
    header = ["B", "Hq/Hkv", "q", "KV", "d", "dtype", "mask", "cache", "splits", "ours µs",
              "DRAM MB", "GB/s", "% read BW", "stream % BW", "% stream", "target"] + [
        "torch " + b + " µs" for b in BACKENDS] + ["torch on", "fastest torch", "speedup"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join(" --- " for _ in header) + "|")
    out_rows = []
    marks = set()
    tally = {"rows": 0, "met": 0, "missed": 0, "stream_below": 0, "faster_than_stream": 0,
             "with_stream": 0}
    misses = []  # (workload, its time, the time its target asks for, a pure read's time)
    listed = sorted(((path, row) for path, _, rows in inputs for row in rows),
                    key=lambda item: shape_order(item[1]["workload"]))
    for path, row in listed:
        w = row["workload"]
        seconds, dram, source = ours(row)
        us = seconds * 1e6 if seconds else None
        gbps = dram / seconds / 1e9 if seconds and dram is not None else None
        share = gbps / read_gbps if gbps is not None else None
        target = target_of(w)
        meets = None if target is None or share is None else share >= target
        alone = stream_seconds(stream, dram) if stream and dram else None
        alone_share = dram / alone / 1e9 / read_gbps if alone else None
        of_stream = alone / seconds if alone and seconds else None
        if of_stream is not None:
            # The advice bounds such a row's gain by this read: a row faster than it would have a
            # bound below its own time (its gain then shows as none).
            tally["with_stream"] += 1
            tally["faster_than_stream"] += of_stream > 1
        if meets is not None:
            tally["rows"] += 1
            tally["met" if meets else "missed"] += 1
            if not meets:
                misses.append((w, seconds, dram / (target * read_gbps * 1e9), alone))
        kv_lens = w.get("kv_lens") or []
        times, reasons = ({b: "-" for b in BACKENDS}, {})
        if bench and w.get("pass", "fwd") == "fwd":
            times, reasons = bench.time(w)
        measured = {b: t for b, t in times.items() if isinstance(t, float)}
        fastest = min(measured, key=measured.get) if measured else None
        best_us = measured[fastest] * 1e3 if fastest else None
        speedup = best_us / us if best_us and us else None
        torch_on = ", ".join(x for x in (
            "contiguous cache" if w.get("page_size") else "",
            "Σ per sequence" if kv_lens else "") if x) or "same shape"
        if source == "model":
            marks.add("~")
        status_cell = us_text(us) if us is not None else row.get("status", "?")
        cells = [
            w["batch"], f"{w['heads']}/{w.get('kv_heads') or w['heads']}", w["q_len"],
            f"≤{w['seq_len']} ragged" if kv_lens else w["seq_len"], w["head_dim"],
            w.get("dtype", "fp16"), "causal" if w["causal"] else "full",
            f"paged{w['page_size']}" if w.get("page_size") else "contig",
            w.get("kv_splits") or "auto", status_cell,
            "-" if dram is None else f"{dram / 1e6:.1f}" + ("~" if source == "model" else ""),
            fmt(gbps, 0), "-" if share is None else f"{100 * share:.1f}%",
            "-" if alone_share is None else f"{100 * alone_share:.1f}%",
            "-" if of_stream is None else f"{100 * of_stream:.1f}%",
            "-" if target is None else
            f"≥{100 * target:.0f}% " + ("-" if meets is None else "yes" if meets else "NO")] + [
            us_text(times[b] * 1e3) if isinstance(times[b], float) else times[b]
            for b in BACKENDS] + [
            torch_on, f"{fastest} {us_text(best_us)}" if fastest else "-",
            f"{speedup:.2f}×" if speedup else "-"]
        print("| " + " | ".join(str(c) for c in cells) + " |")
        sys.stdout.flush()
        out_rows.append({
            "report": path, "kernel": row.get("kernel"), "status": row.get("status"),
            "workload": w, "ours_us": us, "dram_bytes": dram, "dram_bytes_source": source,
            "dram_gbps": gbps, "of_read_bandwidth": share, "target": target, "meets": meets,
            "stream_us": alone * 1e6 if alone else None,
            "stream_of_read_bandwidth": alone_share, "of_stream": of_stream,
            "torch_us": {b: (t * 1e3 if isinstance(t, float) else t) for b, t in times.items()},
            "torch_why_not": reasons, "torch_on": torch_on, "fastest_torch": fastest,
            "fastest_torch_us": best_us, "speedup": speedup})
    # Misses a pure read of the same bytes misses too: no kernel reading them once meets those.
    tally["stream_below"] = sum(1 for _, _, target_s, alone in misses
                                if alone is not None and alone > target_s)
    if not out_rows:
        print("bench_decode.py: no decode rows (workload.q_len) in the reports", file=sys.stderr)
    print()
    if tally["rows"]:
        below = (f"; of those below it, {tally['stream_below']} are below it as a pure stream of "
                 f"the same bytes" if stream else "")
        print(f"Rows with a target: {tally['rows']}; at it: {tally['met']}; below it: "
              f"{tally['missed']}{below}.")
        for w, seconds, target_s, alone in misses:
            read = "" if alone is None else (
                f"; a pure read of its bytes {alone * 1e6:.1f} µs" +
                (", itself short" if alone > target_s else
                 f", {1e6 * (seconds - alone):.1f} µs faster than the row"))
            print(f"  below: {shape_text(w)}: {seconds * 1e6:.1f} µs, the target asks for "
                  f"{target_s * 1e6:.1f} µs ({1e6 * (seconds - target_s):.1f} µs short){read}")
        print()
    if tally["with_stream"]:
        print(f"Rows faster than a pure read of their bytes (a gain bound the advice would set too "
              f"low): {tally['faster_than_stream']} of {tally['with_stream']}.")
        print()
    print("KV: the cache's tokens per sequence (ragged: the longest). splits: --kv-splits (auto: "
          "chosen for the GPU). target: issue 41's acceptance share of the read bandwidth.")
    if stream:
        print("stream % BW: a pure read of the row's DRAM bytes (calibrate's stream), its share of the read "
              "bandwidth (the most a kernel reading them once reaches); % stream: that read's "
              "time over the row's.")
    if "~" in marks:
        print("~ the model's DRAM bytes: the row has no counters.")
    print("torch on: contiguous cache = PyTorch's SDPA has no paged cache, timed on the "
          "contiguous one; Σ per sequence = each ragged sequence alone, the times summed. Causal "
          "with q > 1: bottom-right mask (flash, efficient: causal_lower_right; cudnn, math: a "
          "boolean attn_mask).")
    if args.json:
        result = {"read_bandwidth_gbps": read_gbps, "read_bandwidth_source": read_source,
                  "calibration": args.calibration, "calibration_device": cal_device,
                  "torch_version": bench.version if bench else None,
                  "torch_device": bench.device if bench else None, "reps": args.reps,
                  "stream": stream[0] if stream else None, "tally": tally,
                  "rows": out_rows}
        temporary = f"{args.json}.tmp.{os.getpid()}"  # then renamed: never half a file
        with open(temporary, "w") as f:
            json.dump(result, f, indent=1, default=str)
        os.replace(temporary, args.json)


if __name__ == "__main__":
    main()
