#!/usr/bin/env python3
"""Does the energy roofline's model hold? Reports of `run --energy --counters --calibration
CAL.json` (CAL.json from `calibrate --energy`), row by row:

    python3 scripts/energy_model.py REPORT.json... [--limit 0.10]

Prints each row's modelled joules per launch (analysis.energy: P_static x time + FLOPs x J/FLOP
per pipe + bytes x J/byte per level, at most the board's power limit x time; where the limit
binds, the terms' sum beside it), the measured joules (`run --energy`), |modelled - measured|
/ measured, the dominant cost, each term as a share of the measured joules, the bytes priced
apart (DRAM written, L2 reduced, the bulk-copied share), and a PASS/FAIL line for "every row
within LIMIT (default 10%)" (a full-set row without a counter the model prices, such as
l2_reduction_bytes, fails: its model lacked an input);
rows without a model or a measurement are listed as such. Exits 0 either way (a report, not a
gate).
"""
import json
import sys

# Counters of the full set that the model prices bytes by (energy_model.hpp): a full-set row
# without one was judged on a model that lacked its input.
FULL_SET_PRICED = ("dram_write_bytes", "l2_reduction_bytes")


def label(row):
    w = row.get("workload") or {}
    return (f"{row['kernel']} B{w.get('batch')} H{w.get('heads')} N{w.get('seq_len')} "
            f"d{w.get('head_dim')} {'causal' if w.get('causal') else 'full'} {w.get('pass')} "
            f"{w.get('dtype')}")


def main():
    argv = sys.argv[1:]
    limit = 0.10
    if "--limit" in argv:
        at = argv.index("--limit")
        limit = float(argv[at + 1])
        del argv[at:at + 2]
    if not argv:
        print(__doc__)
        sys.exit(2)
    good = total = 0
    worst = 0.0
    print(f"{'row':46} {'modelled J':>11} {'measured J':>11} {'|error|':>8}  dominant")
    for path in argv:
        report = json.load(open(path))
        full_set = "counter set full" in str((report.get("context") or {}).get("counters", ""))
        for row in report["rows"]:
            energy = (row.get("analysis") or {}).get("energy")
            measured = row.get("energy")
            if not energy:
                print(f"{label(row):46} no energy model (no counters or no coefficients)")
                continue
            if not measured or not measured.get("joules_per_launch"):
                print(f"{label(row):46} no measured energy (run --energy)")
                continue
            modelled = energy["joules"]["value"]
            joules = measured["joules_per_launch"]
            error = abs(modelled - joules) / joules
            # A full-set report without a quantity the model prices is no judgement of the model
            # (l2_reduction_bytes once went uncollected and reductions were priced as reads).
            missing = [q for q in FULL_SET_PRICED
                       if full_set and (row.get("counters") or {}).get(q) is None]
            ok = error <= limit and not missing
            good += ok
            total += 1
            worst = max(worst, error)
            print(f"{label(row):46} {modelled:11.4g} {joules:11.4g} {100 * error:7.1f}%"
                  f"{'' if ok else '!'} {energy['dominant']} "
                  f"{100 * energy['dominant_share']:.0f}%")
            # Each term's joules as a share of the measured joules: where a miss lies.
            terms = ", ".join(f"{t['label']} {100 * t['joules'] / joules:.0f}%"
                              for t in energy.get("terms", []) if t["joules"] >= 0.005 * joules)
            print(f"{'':46} terms (of measured): {terms}")
            # The bytes with prices of their own (energy_model.hpp): DRAM bytes written, L2
            # bytes reduced, and the share of the SMs' L2 traffic L1 never saw (bulk copies).
            c = row.get("counters") or {}
            l2, l1 = c.get("l2_bytes"), c.get("l1_bytes")
            kinds = [f"DRAM written {c['dram_write_bytes'] / 1e6:.1f} MB"
                     if c.get("dram_write_bytes") is not None else None,
                     f"L2 reduced {c['l2_reduction_bytes'] / 1e6:.1f} MB"
                     if c.get("l2_reduction_bytes") is not None else "L2 reduced: not counted",
                     f"bulk share {max(0.0, min(1.0, (l2 - l1) / l2)):.2f}"
                     if l2 and l1 is not None else None]
            print(f"{'':46} bytes: {', '.join(k for k in kinds if k)}")
            if energy.get("at_power_limit"):
                # The model's joules are the limit x the time: the terms alone, for the record.
                sum_ = energy["terms_joules"]
                print(f"{'':46} at the power limit ({energy['power_limit_watts']:.0f} W x "
                      f"{measured['seconds_per_launch'] * 1e6:.1f} us): the terms alone "
                      f"{sum_:.4g} J ({100 * (sum_ - joules) / joules:+.1f}%), measured "
                      f"{measured['watts']:.1f} W")
            if energy.get("note"):
                print(f"{'':46} note: {energy['note']}")
            if missing:
                print(f"{'':46} not judged: the full set's {', '.join(missing)} missing from the "
                      f"report, so the model priced those bytes as another kind")
    print(f"rows within {100 * limit:.0f}%: {good}/{total}, largest |error| {100 * worst:.1f}%: "
          f"{'PASS' if total and good == total else 'FAIL'}")


if __name__ == "__main__":
    main()
