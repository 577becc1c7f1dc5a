#!/usr/bin/env python3
"""Is `run --energy` repeatable? Two reports of the same sweep, row by row:

    python3 scripts/energy_repeat.py A.json B.json [--limit 0.03]

Prints each row's joules per launch, mean power and GPU temperature (°C at the window's end,
where the report has it) in both, their ratio, and a PASS/FAIL line for "every row within LIMIT
(default 3%)"; exits 0 either way (a report, not a gate). A board draws more at one load when
warmer, so the temperatures say whether a difference is the board's state.
"""
import json
import sys


def rows(path):
    out = {}
    for r in json.load(open(path))["rows"]:
        w = r.get("workload") or {}
        key = (r["kernel"], w.get("batch"), w.get("heads"), w.get("seq_len"), w.get("head_dim"),
               w.get("causal"), w.get("pass"), w.get("dtype"))
        out[key] = r.get("energy")
    return out


def celsius(energy):
    t = energy.get("temperature_c")
    return f"{t:.0f}" if t else "-"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    limit = 0.03
    if "--limit" in sys.argv:
        limit = float(sys.argv[sys.argv.index("--limit") + 1])
        args = [a for a in args if a != str(sys.argv[sys.argv.index("--limit") + 1])]
    if len(args) != 2:
        print(__doc__)
        sys.exit(2)
    a, b = rows(args[0]), rows(args[1])
    good = total = 0
    worst = 0.0
    print(f"{'row':44} {'J A':>10} {'J B':>10} {'W A':>7} {'W B':>7} {'°C A':>5} {'°C B':>5} "
          f"{'B/A':>7}")
    for key in a:
        ea, eb = a[key], b.get(key)
        if not ea or not eb:
            continue
        ratio = eb["joules_per_launch"] / ea["joules_per_launch"]
        ok = abs(ratio - 1) <= limit
        good += ok
        total += 1
        worst = max(worst, abs(ratio - 1))
        label = f"{key[0]} N{key[3]} d{key[4]} {'causal' if key[5] else 'full'} {key[6]} {key[7]}"
        print(f"{label:44} {ea['joules_per_launch']:10.4g} {eb['joules_per_launch']:10.4g} "
              f"{ea['watts']:7.1f} {eb['watts']:7.1f} {celsius(ea):>5} {celsius(eb):>5} "
              f"{ratio:7.4f}{'' if ok else ' !'}")
    print(f"rows within {100 * limit:.0f}%: {good}/{total}, largest difference "
          f"{100 * worst:.2f}%: {'PASS' if total and good == total else 'FAIL'}")


if __name__ == "__main__":
    main()
