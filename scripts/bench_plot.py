#!/usr/bin/env python3
"""Time and memory of `plot -o` against the number of rows: a table, no assertion.

Reports come from `model` (no GPU): every kernel x causal/full x fwd/bwd per sequence length,
as many lengths as R rows need (the table shows the rows the report holds: R rounded up). Each
size is plotted once; wall time and that child's peak resident memory (ru_maxrss from wait4)
are printed with the report's and the SVG's size. `plot` reads reports row by row
(report_from_text), so its memory follows the rows kept, not the JSON text's tree. A report above
plot's limit (kMaxPlotInputBytes, 200 MiB: about 30,000 rows) is refused with exit 2; its line
says so.

    scripts/bench_plot.py [--binary build/nocuda/app/cuflash-roofline] [--rows 1000,10000,30000]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

MAX_PLOT_INPUT_BYTES = 200 << 20  # lib/core/base/limits.hpp: kMaxPlotInputBytes


def model_report(binary: str, path: str, lengths: list) -> None:
    subprocess.run([binary, "model", "--gpu", "h100", "--pass", "fwd,bwd",
                    "--seq", ",".join(str(n) for n in lengths), "--json", path],
                   check=True, stdout=subprocess.DEVNULL)


def timed(command: list) -> tuple:
    """Exit code, wall seconds and peak RSS (MB) of one child."""
    start = time.monotonic()
    child = subprocess.Popen(command)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.monotonic() - start
    return os.waitstatus_to_exitcode(status), elapsed, usage.ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default="build/nocuda/app/cuflash-roofline")
    parser.add_argument("--rows", default="1000,10000,30000")
    args = parser.parse_args()
    sizes = [int(r) for r in args.rows.split(",")]
    print(f"{'rows':>8} {'JSON MB':>8} {'plot -o s':>10} {'peak RSS MB':>12} {'SVG MB':>8}",
          flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, "probe.json")
        model_report(args.binary, probe, [1024])
        with open(probe) as f:
            per_length = len(json.load(f)["rows"])
        for rows in sizes:
            lengths = [1024 + 16 * i for i in range((rows + per_length - 1) // per_length)]
            report = os.path.join(tmp, f"model{rows}.json")
            model_report(args.binary, report, lengths)
            rows = len(lengths) * per_length
            svg = os.path.join(tmp, f"chart{rows}.svg")
            command = [args.binary, "plot", report, "-o", svg]
            code, elapsed, peak_mb = timed(command)
            json_mb = os.path.getsize(report) / 1e6
            if code == 2 and os.path.getsize(report) > MAX_PLOT_INPUT_BYTES:
                print(f"{rows:>8} {json_mb:8.0f}    refused (above plot's 200 MiB limit)",
                      flush=True)
                continue
            if code != 0:
                sys.exit(f"bench_plot: {' '.join(command)} failed")
            print(f"{rows:>8} {json_mb:8.0f} {elapsed:10.2f} {peak_mb:12.0f} "
                  f"{os.path.getsize(svg) / 1e6:8.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
