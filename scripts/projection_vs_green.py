#!/usr/bin/env python3
"""Does the projection onto a share of the SMs hold? A report measured on the whole GPU and
projected onto N of its SMs (`show FULL.json --gpu SPEC --sms N --json PROJECTED.json`) against
the same work measured in a green context of N SMs (`run --sms N` or `profile` of a program that
made one), row by row and in sum:

    python3 scripts/projection_vs_green.py PROJECTED.json GREEN.json [--by row|name]
        [--sum-limit 0.10] [--row-limit 0.20] [--min-seconds 0]

--by row (default, `run` reports): one row per kernel and workload. --by name (`profile`
reports): the launches of each kernel name summed, a row per name. Prints each row's projected
and measured time, measured / projected, the roof that binds the projection, and PASS/FAIL for
"summed time within SUM-LIMIT, every row within ROW-LIMIT" (rows whose projected time is below
MIN-SECONDS are listed but not judged). Exits 0 either way (a report, not a gate); 2 when the
reports do not fit together (no common row, or the green report's SM count is not the
projection's). Rows whose launches run two kernels or more (`run`'s kernel pass) are listed
after the verdict kernel by kernel, paired by position: the time, grid and name of each on the
whole GPU and on the share. Rows the
projection carried over by a level's share curve then show the SMs of the curve's kernel it took
for their bytes in flight against the SMs their time on the share implies.
"""
import argparse
import json
import re
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def seconds(row):
    t = (row.get("analysis") or {}).get("time_seconds") or {}
    value = t.get("value")
    return value if isinstance(value, (int, float)) and value > 0 else None


def key_of(row, by):
    if by == "name":
        return row["kernel"]
    w = row.get("workload") or {}
    mask = "causal" if w.get("causal") else "full"
    return (f"{row['kernel']} B{w.get('batch')} H{w.get('heads')} N{w.get('seq_len')} "
            f"d{w.get('head_dim')} {mask} {w.get('pass')} {w.get('dtype', 'fp16')}"
            + (f" q{w['q_len']}" if w.get("q_len") else ""))


def table(report, by):
    """key -> [seconds, launches, regime of the longest launch]"""
    out = {}
    for row in report["rows"]:
        if row.get("status") not in ("ok", "counters_unavailable"):
            continue
        t = seconds(row)
        if t is None:
            continue
        entry = out.setdefault(key_of(row, by), [0.0, 0, "", 0.0])
        entry[0] += t
        entry[1] += 1
        if t > entry[3]:
            entry[2] = (row.get("analysis") or {}).get("regime", "")
            entry[3] = t
    return out


def kernels_by_row(report):
    """row key -> its kernels (`run`'s kernel pass) for rows of two kernels or more."""
    out = {}
    for row in report["rows"]:
        kernels = row.get("kernels") or []
        if len(kernels) >= 2 and seconds(row) is not None:
            out[key_of(row, "row")] = (kernels, seconds(row))
    return out


def print_kernels(projected_report, green_report):
    """Each multi-kernel row's kernels as run on the whole GPU (the projected report keeps the
    measured rows' kernels) and on the green context: how each kernel's time changed with the
    SMs, and the time no kernel ran."""
    whole, share = kernels_by_row(projected_report), kernels_by_row(green_report)
    common = [k for k in whole if k in share]
    if not common:
        return
    print("kernels of the multi-kernel rows, on the whole GPU and on the share\n"
          "(the kernel pass's medians; time no kernel ran = the row's time less the kernels'):")
    for k in common:
        (kw, _), (ks, ts) = whole[k], share[k]
        print(f"  {k}")
        if len(kw) != len(ks):
            print("    other kernels on the share: " + ", ".join(x["name"][:40] for x in ks))
            continue
        # By position: a library may pick another kernel for the same step on fewer SMs (cuBLAS
        # sizes its persistent GEMMs to the SMs it sees), so both names and grids are shown.
        for a, b in zip(kw, ks):
            grids = ["x".join(str(g) for g in x["grid"]) for x in (a, b)]
            print(f"    {a['seconds'] * 1e6:9.2f} us {b['seconds'] * 1e6:9.2f} us "
                  f"{b['seconds'] / a['seconds']:6.2f}x  grid {grids[0]:>9} {grids[1]:>9}  "
                  f"{a['name'][:48]}")
            if a["name"] != b["name"]:
                print(f"    {'':56}on the share: {b['name'][:48]}")
        idle_s = ts - sum(x["seconds"] for x in ks)
        print(f"    {'':9}    {idle_s * 1e6:9.2f} us          no kernel ran, on the share")


def rising(shares):
    """A level's share curve from (0, 0), each point at least the one before (sm_share.cpp)."""
    curve = [(0, 0.0)]
    for point in shares:
        curve.append((point["sms"], max(point["gbps"], curve[-1][1])))
    return curve


def sms_drawing(curve, gbps):
    """The SMs the curve's kernel needs to draw `gbps` (all of them at or past its top)."""
    for (n0, g0), (n1, g1) in zip(curve, curve[1:]):
        if gbps <= g1 and g1 > g0:
            return n0 + (gbps - g0) / (g1 - g0) * (n1 - n0)
    return curve[-1][0]


DREW = re.compile(r"(DRAM|L2): drew ([\d.,]+) GB/s on (\d+) SMs")


def print_share_curve(projected_report, green_report):
    """Rows the projection carried over by a level's share curve (its note: "DRAM: drew X GB/s
    on N SMs"): the SMs of the curve's kernel that the projection took for their bytes in flight
    (from what they drew on all SMs), against the SMs that their time in the green context
    implies (from what they drew there). Where the two differ, the inversion misjudged the
    bytes in flight (a draw on the curve's flat top says little about them)."""
    measured = projected_report["context"].get("measured_spec")
    spec = (projected_report.get("specs") or {}).get(measured) or {}
    curves = {m["level"]: rising(m["shares"]) for m in spec.get("memory_levels", [])
              if m.get("shares")}
    green_sms = green_report["context"].get("green_context_sms")
    green = {key_of(row, "row"): row for row in green_report["rows"]}
    lines = []
    for row in projected_report["rows"]:
        a = row.get("analysis") or {}
        hit = DREW.search(a.get("projection_note") or "")
        k = key_of(row, "row")
        if not hit or k not in green or not green_sms or seconds(green[k]) is None:
            continue
        level = hit.group(1).lower()
        drawn, all_sms = float(hit.group(2).replace(",", "")), int(hit.group(3))
        counted = [lv for lv in a.get("levels", []) if lv.get("level") == level]
        bytes_ = (counted[0].get("bytes") or {}).get("value") if counted else None
        if level not in curves or not bytes_:
            continue
        there = bytes_ / seconds(green[k]) / 1e9
        took = sms_drawing(curves[level], drawn)
        implied = sms_drawing(curves[level], there) * all_sms / green_sms
        lines.append(f"  {k[:46]:46} {hit.group(1):4} {drawn:7.0f} {there:7.0f} GB/s "
                     f"{took:7.1f} {implied:8.1f}")
    if lines:
        print("rows carried over by a share curve: what they drew on all SMs and on the share, "
              "and the SMs of the curve's kernel the projection took for them against those "
              "their time on the share implies:")
        print(f"  {'row':46} {'':4} {'all':>7} {'share':>7}      {'taken':>7} {'implied':>8}")
        print("\n".join(lines))


FIT = re.compile(r"(DRAM|L2): (\S+ \S+) on (\d+) SMs and (\S+ \S+) on (\d+) \(its share run[^)]*\): "
                 r"its bytes as the share curve's kernel draws them with ([\d.]+) of its bytes "
                 r"in flight per SM, and (\S+ \S+) no SM count changes")


def print_share_fits(projected_report):
    """Rows timed from their share run (`show --share-run`): the fit each row's note gives, its
    bytes in flight per SM as a share of the curve kernel's and the part no SM count changes."""
    lines = []
    for row in projected_report["rows"]:
        hit = FIT.search((row.get("analysis") or {}).get("projection_note") or "")
        if hit:
            lines.append(f"  {key_of(row, 'row')[:46]:46} {hit.group(1):4} {hit.group(2):>9} "
                         f"{hit.group(4):>9} {hit.group(5):>4} {hit.group(6):>7} {hit.group(7):>9}")
    if lines:
        print("rows timed from their share run: time on all SMs and on the share run's, its SMs, "
              "bytes in flight per SM against the curve's kernel, and the part no SM count "
              "changes:")
        print(f"  {'row':46} {'':4} {'all':>9} {'few':>9} {'SMs':>4} {'per SM':>7} {'fixed':>9}")
        print("\n".join(lines))


def sms_of(report):
    specs = report.get("specs") or {}
    keys = {row.get("spec") for row in report["rows"]}
    return {k: specs[k].get("sm_count") for k in keys if k in specs}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("projected")
    parser.add_argument("green")
    parser.add_argument("--by", choices=("row", "name"), default="row")
    parser.add_argument("--sum-limit", type=float, default=0.10)
    parser.add_argument("--row-limit", type=float, default=0.20)
    parser.add_argument("--min-seconds", type=float, default=0.0)
    args = parser.parse_args()
    projected_report, green_report = load(args.projected), load(args.green)
    projected_sms = set(sms_of(projected_report).values())
    green_sms = green_report["context"].get("green_context_sms")
    print(f"projected: {args.projected} (spec SMs {sorted(projected_sms)}); measured: "
          f"{args.green} (green context of {green_sms} SMs)")
    if green_sms is not None and projected_sms and projected_sms != {green_sms}:
        print(f"the projection is onto {sorted(projected_sms)} SMs, the green context had "
              f"{green_sms}: project onto the SMs it had")
        sys.exit(2)
    projected, green = table(projected_report, args.by), table(green_report, args.by)
    common = [k for k in projected if k in green]
    if not common:
        print("no row is in both reports")
        sys.exit(2)
    only = len(projected) - len(common), len(green) - len(common)
    common.sort(key=lambda k: -projected[k][0])
    width = min(60, max(len(k) for k in common))
    print(f"{'row':{width}} {'n':>5} {'projected':>12} {'measured':>12} {'meas/proj':>9}  binds "
          "(projected)")
    judged = good = 0
    worst = 0.0
    for k in common:
        p, g = projected[k][0], green[k][0]
        ratio = g / p
        small = p < args.min_seconds
        ok = abs(ratio - 1) <= args.row_limit
        if not small:
            judged += 1
            good += ok
            worst = max(worst, abs(ratio - 1))
        mark = " (not judged)" if small else ("" if ok else " !")
        print(f"{k[:width]:{width}} {green[k][1]:5d} {p * 1e3:10.4f}ms {g * 1e3:10.4f}ms "
              f"{ratio:9.3f}  {projected[k][2][:48]}{mark}")
    total_p = sum(projected[k][0] for k in common)
    total_g = sum(green[k][0] for k in common)
    sum_ok = abs(total_g / total_p - 1) <= args.sum_limit
    print(f"{'sum':{width}} {'':5} {total_p * 1e3:10.4f}ms {total_g * 1e3:10.4f}ms "
          f"{total_g / total_p:9.3f}")
    if any(only):
        print(f"rows in one report only: {only[0]} projected, {only[1]} measured (left out)")
    print(f"summed time within {100 * args.sum_limit:.0f}%: {'yes' if sum_ok else 'no'} "
          f"({100 * (total_g / total_p - 1):+.1f}%); rows within {100 * args.row_limit:.0f}%: "
          f"{good}/{judged}, largest difference {100 * worst:.1f}%: "
          f"{'PASS' if sum_ok and judged and good == judged else 'FAIL'}")
    print_kernels(projected_report, green_report)
    print_share_curve(projected_report, green_report)
    print_share_fits(projected_report)


if __name__ == "__main__":
    main()
