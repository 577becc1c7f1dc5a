#!/usr/bin/env python3
"""Where a kernel's warps stall, per SASS instruction, from Nsight Compute's source page.

    ncu --clock-control none --section SourceCounters --section WarpStateStats \
        -k regex:KERNEL --launch-skip 1 --launch-count 1 -o REPORT PROGRAM...
    ncu -i REPORT.ncu-rep --page source --csv --print-source sass > source.csv
    scripts/ncu_source_stalls.py source.csv [--top 45]

Prints the CSV's columns, the share of the warp-state samples per opcode (with the
instructions executed), and the instructions with the most samples, each with its three
largest stall reasons. A stall on a barrier is sampled at the instruction after it (a `bar.sync`
wait shows on the next instruction).
"""
import argparse
import collections
import csv
import re
import sys


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", help="ncu --page source --csv --print-source sass output")
    parser.add_argument("--top", type=int, default=45, help="instructions to list (default 45)")
    args = parser.parse_args()
    rows = list(csv.reader(open(args.csv, errors="replace")))
    try:
        header_at = next(i for i, r in enumerate(rows) if any(c.strip() == "Source" for c in r))
    except StopIteration:
        sys.exit(f"{args.csv}: no 'Source' column (not ncu's source page as CSV)")
    header = [c.strip() for c in rows[header_at]]
    data = [r for r in rows[header_at + 1:] if len(r) == len(header)]
    source = header.index("Source")
    samples = next((i for i, h in enumerate(header) if h.startswith("Warp Stall Sampling (All")),
                   None)
    if samples is None:
        sys.exit(f"{args.csv}: no 'Warp Stall Sampling (All Samples)' column (collect SourceCounters)")
    executed = next((i for i, h in enumerate(header) if h.startswith("Instructions Executed")), None)
    reasons = [i for i, h in enumerate(header)
               if h.startswith("stall_") and "(Not Issued)" not in h]
    print("columns:", " | ".join(header))
    total = sum(number(r[samples]) or 0 for r in data)
    if total == 0:
        sys.exit(f"{args.csv}: no samples")
    print(f"samples {total:.0f} over {len(data)} instructions")
    share, count = collections.Counter(), collections.Counter()
    for r in data:
        text = re.sub(r"^@!?U?P\w+\s+", "", r[source].strip())
        opcode = text.split(" ")[0] if text else "?"
        share[opcode] += number(r[samples]) or 0
        if executed is not None:
            count[opcode] += number(r[executed]) or 0
    print("== samples by opcode: share, instructions executed")
    for opcode, value in share.most_common(25):
        print(f"  {opcode:<32} {100 * value / total:5.1f}%  {count[opcode]:.3g}")
    print("== instructions with the most samples: index, share, SASS, executed, top reasons")
    for i in sorted(range(len(data)), key=lambda i: -(number(data[i][samples]) or 0))[:args.top]:
        r = data[i]
        top = sorted(((number(r[c]) or 0, header[c][len("stall_"):]) for c in reasons),
                     reverse=True)[:3]
        why = " ".join(f"{name}={value:.0f}" for value, name in top if value)
        ran = f" x{number(r[executed]):.3g}" if executed is not None and number(r[executed]) else ""
        print(f"  {i:5d} {100 * (number(r[samples]) or 0) / total:5.2f}% "
              f"{r[source].strip()[:60]:<60}{ran} {why}")


if __name__ == "__main__":
    main()
