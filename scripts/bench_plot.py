#!/usr/bin/env python3
"""Time and memory of `plot -o` against the number of rows: a table, no assertion.

Reports come from `model` (no GPU): 3 kernels x causal/full x fwd/bwd = 12 rows per sequence
length, so R rows take R/12 lengths. Each size is plotted once; wall time and the child's peak
resident memory (ru_maxrss) are printed with the SVG's size.

    scripts/bench_plot.py [--binary build/nocuda/app/cuflash-roofline] [--rows 1000,10000,100000]
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default="build/nocuda/app/cuflash-roofline")
    parser.add_argument("--rows", default="1000,10000,100000")
    args = parser.parse_args()
    sizes = [int(r) for r in args.rows.split(",")]
    print(f"{'rows':>8} {'plot -o s':>10} {'peak RSS MB':>12} {'SVG MB':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for rows in sizes:
            lengths = ",".join(str(1024 + 16 * i) for i in range((rows + 11) // 12))
            report = os.path.join(tmp, f"model{rows}.json")
            subprocess.run([args.binary, "model", "--gpu", "h100", "--pass", "fwd,bwd",
                            "--seq", lengths, "--json", report], check=True,
                            stdout=subprocess.DEVNULL)
            svg = os.path.join(tmp, f"chart{rows}.svg")
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            start = time.monotonic()
            subprocess.run([args.binary, "plot", report, "-o", svg], check=True)
            elapsed = time.monotonic() - start
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            # ru_maxrss of children is the largest of any child so far (KiB on Linux).
            peak_note = f"{peak / 1024:12.0f}" if peak > before else f"{'<=' + str(round(before / 1024)):>12}"
            print(f"{rows:>8} {elapsed:10.2f} {peak_note} {os.path.getsize(svg) / 1e6:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
