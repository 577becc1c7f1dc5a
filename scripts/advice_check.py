#!/usr/bin/env python3
"""Is the advice honest, and is the tail roof a bound? Both judged on `run --json` reports.

    python3 scripts/advice_check.py REPORT.json [REPORT.json ...]

Advice: for each workload (B, H, N, d, mask, pass) measured with both kernels of a pair whose
answer is known (standard -> flash-v3: fusion; flash-v1 -> flash-v2: tensor cores;
flash-v2 -> flash-v3: wgmma), the slower kernel's advice (analysis.advice, its lever or one of
`also`) must name the lever the faster kernel used, and the measured speed-up (time of the slow
row / time of the fast one) must not exceed that lever's estimated upper bound. Printed side by side.

Tail roof: every row with a tail effect whose grid is below two waves (analysis.tail): its FLOP
rate against the tail roof (at the spec's clock, and at the clock measured in the range) and
against the plain roof. The roof is a bound when no row exceeds it at the measured clock.
Asserts nothing: prints the tables and one summary line each.
"""
import collections
import json
import math
import sys

PAIRS = (("standard", "flash-v3", "fusion"), ("flash-v1", "flash-v2", "tensor cores"),
         ("flash-v2", "flash-v3", "wgmma"))


def rows_of(paths):
    for path in paths:
        for row in json.load(open(path))["rows"]:
            if row.get("status") == "ok" and row.get("workload") and row.get("analysis"):
                yield row


def key(row):
    w = row["workload"]
    return (w["batch"], w["heads"], w["seq_len"], w["head_dim"], w["causal"], w["pass"])


def label(k):
    b, h, n, d, causal, p = k
    return f"B{b} H{h} N{n} d{d} {'causal' if causal else 'full'} {p}"


def number(x):
    """A JSON number, or the value of a tagged one ({"value": x, "source": ...})."""
    if isinstance(x, dict):
        x = x.get("value")
    return x if isinstance(x, (int, float)) else math.nan


def main():
    rows = list(rows_of(sys.argv[1:]))
    by = collections.defaultdict(dict)
    for r in rows:
        by[key(r)][r["kernel"]] = r
    print("Advice on pairs whose answer is known (estimated: the slower row's upper bound)")
    print(f"{'workload':34} {'slow -> fast':22} {'lever':14} {'expected':13} "
          f"{'estimated':>9} {'measured':>9}  ok")
    n = ok = 0
    for k in sorted(by):
        for slow, fast, expected in PAIRS:
            if slow not in by[k] or fast not in by[k]:
                continue
            s, f = by[k][slow], by[k][fast]
            advice = s["analysis"].get("advice") or {}
            # The row's lever, or another lever its advice names (a tail-bound row: also wgmma).
            levers = [advice] + list(advice.get("also") or [])
            named = next((l for l in levers if l.get("lever") == expected), None)
            lever = advice.get("lever", "-") + ("" if named is None or named is advice
                                                else "+" + expected)
            estimated = number((named or advice).get("estimated_speedup"))
            measured = number(s["analysis"]["time_seconds"]) / number(f["analysis"]["time_seconds"])
            good = named is not None and measured <= estimated
            n += 1
            ok += good
            print(f"{label(k):34} {slow + ' -> ' + fast:22} {lever:14} {expected:13} "
                  f"{estimated:9.2f} {measured:9.2f}  {'yes' if good else 'NO'}")
    print(f"advice: {ok}/{n} pairs name the faster kernel's lever with the measured speed-up "
          "within the estimate")
    print()
    print("Tail roof on grids below two waves (TFLOP/s on the kernel's own pipe)")
    print(f"{'kernel':10} {'workload':34} {'CTAs':>6} {'busy':>5} {'measured':>9} "
          f"{'tail roof':>9} {'at clock':>9} {'plain':>7}  within")
    t = within = closer = lowered = 0
    for r in rows:
        a = r["analysis"]
        tail = a.get("tail")
        if not tail or not tail.get("waves") or tail["waves"] > 2:
            continue
        eff = number(tail["efficiency"])
        ceiling = a.get("ceiling") or {}
        plain = number(ceiling.get("peak_tflops"))
        at_clock = number(ceiling.get("peak_tflops_at_measured_clock"))
        measured = number(a.get("tflops_per_second"))
        roof = plain * eff
        roof_clock = (at_clock if math.isfinite(at_clock) else plain) * eff
        good = measured <= roof_clock * 1.0001
        t += 1
        within += good
        lower = eff < 1
        lowered += lower
        closer += lower and abs(roof - measured) < abs(plain - measured)
        print(f"{r['kernel']:10} {label(key(r)):34} {tail['ctas']:6} {100 * eff:4.0f}% "
              f"{measured:9.1f} {roof:9.1f} {roof_clock:9.1f} {plain:7.1f}  "
              f"{'yes' if good else 'NO'}")
    print(f"tail roof: {within}/{t} rows below two waves at or under it (at the measured clock); "
          f"{closer}/{lowered} of those it lowers (efficiency below 1) closer to it than to the "
          "plain roof")


if __name__ == "__main__":
    main()
