#!/usr/bin/env python3
"""Is the power-capped roof a roof? A calibration of `calibrate --power-cap` (or --energy) and
reports of `run` on the same GPU:

    python3 scripts/power_cap_check.py CAL.json REPORT.json...

Prints each compute roof of CAL.json, burst (the timed launches, at the clock block 0 measured)
against at the power cap (back to back over the window, at NVML's median SM clock), and which of
the two the overlay's ceiling is; then each report row's measured TFLOP/s against the overlay's
ceiling of its pipe (analysis.ceiling.id), and a PASS/FAIL line for "no measured row above the
roof of its pipe". Rows whose pipe the calibration has no ceiling for, or without a rate, are
listed as such. Exits 0 either way (a report, not a gate).
"""
import json
import statistics
import sys


def ceiling_id(entry):
    return entry["path"] + ("." + entry["instruction"] if entry.get("instruction") else "")


def label(row):
    w = row.get("workload") or {}
    if not w:
        return row["kernel"]
    return (f"{row['kernel']} B{w.get('batch')} H{w.get('heads')} N{w.get('seq_len')} "
            f"d{w.get('head_dim')} {'causal' if w.get('causal') else 'full'} {w.get('pass')}")


def value(tagged):
    if isinstance(tagged, dict):
        tagged = tagged.get("value")
    return tagged if isinstance(tagged, (int, float)) else None


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        cal = json.load(f)
    roofs = {ceiling_id(c): c for c in cal.get("compute_ceilings", [])}

    print("compute roofs of", sys.argv[1], "(TFLOP/s; xu: T exp2/s)")
    print(f"  {'kernel':<12} {'target':<22} {'burst':>9} {'at clock':>9} "
          f"{'at power cap':>13} {'its clock':>10}  roof")
    for m in cal.get("measurements", []):
        # Bytes are no compute roof; a share of the SMs prices energy, it is no roof either.
        if m.get("unit") == "bytes" or m.get("sms"):
            continue
        burst = m["work"] / statistics.median(m["samples_seconds"]) / 1e12
        cap = m.get("power_cap")
        if cap and cap.get("seconds_per_launch", 0) > 0:
            sustained = f"{m['work'] / cap['seconds_per_launch'] / 1e12:.1f}"
            cap_clock = f"{cap['sm_clock_mhz']:.0f} MHz"
            limit = f" (clock limit: {cap['clock_limit']})" if cap.get("clock_limit") else ""
        else:
            sustained, cap_clock, limit = "-", "-", ""
        roof = roofs.get(m["target"])
        which = ("at the power cap" if roof and roof.get("at_power_cap") else
                 "burst" if roof else "per clock (xu)" if m["target"] == "xu" else "-")
        print(f"  {m['id']:<12} {m['target']:<22} {burst:>9.1f} {m['sm_clock_mhz']:>5.0f} MHz "
              f"{sustained:>13} {cap_clock:>10}  {which}{limit}")

    above, judged, skipped = [], 0, []
    print("rows against the roof of their pipe (the calibration's ceiling)")
    for path in sys.argv[2:]:
        with open(path) as f:
            report = json.load(f)
        for row in report.get("rows", []):
            a = row.get("analysis") or {}
            ceiling = a.get("ceiling") or {}
            rate = value(a.get("tflops_per_second"))
            roof = roofs.get(ceiling.get("id", ""))
            if rate is None or roof is None:
                skipped.append(f"{label(row)}: "
                               + ("no rate" if rate is None else
                                  f"no calibrated ceiling for {ceiling.get('id', '-')}"))
                continue
            judged += 1
            share = rate / roof["peak_tflops"]
            name = ceiling["id"] + (" at the power cap" if roof.get("at_power_cap") else "")
            print(f"  {label(row)}: {rate:.1f} TFLOP/s, {100 * share:.1f}% of {name} "
                  f"{roof['peak_tflops']:.1f} at {roof['clock_mhz']:.0f} MHz")
            if share > 1:
                above.append(label(row))
    for line in skipped:
        print("  not judged:", line)
    if judged == 0:
        print("FAIL: no row judged against a calibrated compute roof")
    elif above:
        print(f"FAIL: {len(above)} of {judged} rows above the roof of their pipe: "
              + "; ".join(above))
    else:
        print(f"PASS: none of {judged} rows above the power-capped roof of its pipe")
    return 0


if __name__ == "__main__":
    sys.exit(main())
