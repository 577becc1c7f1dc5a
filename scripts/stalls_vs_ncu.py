#!/usr/bin/env python3
"""`run --stalls` and `profile --stalls` against Nsight Compute's warp-state sampling, point by
point, from what scripts/stalls_check.sh wrote into DIR (its stage `profile` into DIR/profile):

    python3 scripts/stalls_vs_ncu.py DIR

  ours_N.json          run --stalls --json (one point), or profile --stalls --json (one launch)
  ncu_raw_N.csv        ncu -i REPORT --page raw --csv (smsp__pcsamp_warps_issue_stalled_*)
  ncu_source_N.csv     ncu -i REPORT --page source --csv --print-source sass
  ncu_source_again_N.csv  the same from ncu's second run on the launch, where there is one
  cost.txt             one line per point: LABEL plain= stalls= alone= ncu= seconds (for
                       profile, plain and alone are both the program alone, medians of its
                       runs, each run's seconds in alone_runs= stalls_runs= ncu_runs=, "/"
                       between them; added= and ncu_added=, where given, the medians of each
                       tool's addition to the alone run of its own round, and judged instead)

Judged per point (the issue's criteria): every stall reason above 5% of the samples in either
tool within 5 percentage points of ncu's share; the top 5 instructions by samples the same as
ncu's (as a set; an instruction is its offset in its kernel and its opcode), in the point's
main kernel (ncu samples each kernel of a point at a period of its own, so its samples of two
kernels are not shares of one time), or, where ncu's two runs on the launch rank them
differently themselves, the same as its second run's (within ncu's own run-to-run spread, as
issue 19 settled for L2 bytes); where the sets differ, each instruction apart is printed with
its share in both, and one instruction swapped at the 5th place, where both tools' shares of
the two are within their 95% binomial noise of each other, is a tie that neither tool's samples
can rank (the sets agree up to it); the cost of
the stall pass (run --stalls minus run; profile --stalls minus the program alone) at most a fifth
of ncu's (under ncu minus alone). Prints a
table per point and a PASS/FAIL line per criterion; exits 0 either way (a report, not a gate).
"""
import csv
import glob
import json
import os
import re
import sys

PREFIX = "smsp__pcsamp_warps_issue_stalled_"


def number(text):
    try:
        return float(str(text).replace(",", ""))
    except ValueError:
        return None


def ncu_reasons(path):
    """{reason: samples} summed over every result (kernel) of the point."""
    with open(path, errors="replace") as f:
        rows = list(csv.reader(line for line in f if line.startswith('"')))
    if not rows:
        return {}
    header = rows[0]
    out = {}
    for row in rows[1:]:
        if len(row) != len(header) or row[0] == "":  # the units line has an empty ID
            continue
        for name, cell in zip(header, row):
            if not name.startswith(PREFIX) or name.endswith("_not_issued"):
                continue
            value = number(cell)
            if value is not None:
                reason = name[len(PREFIX):]
                out[reason] = out.get(reason, 0) + value
    return out


def opcode(sass):
    words = [w for w in sass.split() if not w.startswith("@")]
    return words[0].split(".")[0] if words else ""


def base_name(name):
    """The kernel's own identifier: 'flash_v2_backward_kernel' of ncu's demangled
    'void roofline::kernels::<unnamed>::flash_v2_backward_kernel<__half, (int)64>(...)'."""
    head = re.split(r"[<(]", name.replace("<unnamed>", ""), maxsplit=1)[0]
    return head.split("::")[-1].split()[-1] if head.strip() else name


def ncu_instructions(path):
    """[(samples, offset, opcode, kernel)] of every kernel on the source page, offsets from
    each kernel's first address, kernel its base_name."""
    with open(path, errors="replace") as f:
        rows = list(csv.reader(f))
    out = []
    block = None
    kernel = ""
    for row in rows:
        cells = [c.strip() for c in row]
        if cells and cells[0] == "Kernel Name" and len(cells) > 1:
            kernel = base_name(cells[1])
            continue
        if "Source" in cells and any(c.startswith("Warp Stall Sampling (All") for c in cells):
            block = {"kernel": kernel,
                     "address": cells.index("Address") if "Address" in cells else None,
                     "source": cells.index("Source"),
                     "samples": next(i for i, c in enumerate(cells)
                                     if c.startswith("Warp Stall Sampling (All")),
                     "width": len(cells), "rows": []}
            out.append(block)
            continue
        if block is None or len(cells) != block["width"]:
            continue
        samples = number(cells[block["samples"]]) or 0
        address = None
        if block["address"] is not None:
            try:
                address = int(cells[block["address"]], 16)
            except ValueError:
                address = None
        block["rows"].append((samples, address, opcode(cells[block["source"]])))
    # The page lists a kernel once per profiled launch of it: one instruction's samples summed
    # (kernel by kernel: ncu samples each kernel at a period of its own, so the samples of two
    # kernels of one point do not add up to shares of its time).
    summed = {}
    for b in out:
        addresses = [a for _, a, _ in b["rows"] if a is not None]
        base = min(addresses) if addresses else 0
        for samples, address, op in b["rows"]:
            key = (None if address is None else address - base, op, b["kernel"])
            summed[key] = summed.get(key, 0) + samples
    return [(samples, off, op, kernel) for (off, op, kernel), samples in summed.items()]


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    d = sys.argv[1]
    costs = {}
    runs = {}
    labels = {}
    if os.path.exists(os.path.join(d, "cost.txt")):
        for i, line in enumerate(open(os.path.join(d, "cost.txt"))):
            fields = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
            costs[i] = {k: number(v) for k, v in fields.items()}
            # Medians above; each run's seconds beside them (stage profile, COST_RUNS).
            runs[i] = ", ".join(f"{k[:-5]} {v.replace('/', ' ')}" for k, v in fields.items()
                                if k.endswith("_runs"))
            labels[i] = line.split()[0] if line.split() else ""
    reasons_ok = [0, 0]
    top_ok = [0, 0]
    cost_ok = [0, 0]
    n = 0
    while os.path.exists(os.path.join(d, f"ours_{n}.json")):
        try:
            report = json.load(open(os.path.join(d, f"ours_{n}.json")))
        except (OSError, ValueError) as error:
            print(f"{labels.get(n, n)}: no report ({error})")
            n += 1
            continue
        # A profiled program's first sampled row (a graph launch's parent holds all its nodes').
        rows = [r for r in report["rows"] if r.get("stalls")] or report["rows"]
        if not rows:
            print(f"{labels.get(n, n)}: no row")
            n += 1
            continue
        row = rows[0]
        w = row.get("workload")
        if row.get("launch"):
            label = f"{labels.get(n, '')} {row['kernel']} #{row['launch']['index']}".strip()
        else:
            label = f"{row['kernel']} d{w['head_dim']} {w['pass']}"
        stalls = row.get("stalls")
        theirs = ncu_reasons(os.path.join(d, f"ncu_raw_{n}.csv"))
        if not stalls or not stalls["samples"] or not theirs:
            print(f"{label}: no data (ours: {bool(stalls and stalls['samples'])}, "
                  f"ncu: {bool(theirs)})")
            n += 1
            continue
        ours_total = stalls["samples"]
        ncu_total = sum(theirs.values())
        print(f"\n{label}: ours {ours_total} samples (2^{stalls['period_log2']} cycles), "
              f"ncu {ncu_total:.0f}")
        print(f"  {'reason':22} {'ours %':>7} {'ncu %':>7} {'diff':>6}")
        names = sorted(set(stalls["reasons"]) | set(theirs),
                       key=lambda r: -(theirs.get(r, 0) / ncu_total))
        worst = 0.0
        for r in names:
            mine = 100 * stalls["reasons"].get(r, 0) / ours_total
            ref = 100 * theirs.get(r, 0) / ncu_total
            if max(mine, ref) < 1:
                continue
            judged = max(mine, ref) > 5
            diff = mine - ref
            if judged:
                worst = max(worst, abs(diff))
            print(f"  {r:22} {mine:7.1f} {ref:7.1f} {diff:+6.1f}{' !' if judged and abs(diff) > 5 else ''}")
        ok = worst <= 5
        reasons_ok[0] += ok
        reasons_ok[1] += 1
        print(f"  reasons above 5%: largest difference {worst:.1f} points: {'PASS' if ok else 'FAIL'}")
        # The instructions of the point's main kernel (the most samples in ncu's page), in both.
        ref_rows = sorted(ncu_instructions(os.path.join(d, f"ncu_source_{n}.csv")),
                          key=lambda x: -x[0])
        per_kernel = {}
        for samples, _, _, kernel in ref_rows:
            per_kernel[kernel] = per_kernel.get(kernel, 0) + samples
        main = max(per_kernel, key=per_kernel.get) if per_kernel else ""
        ref_top = [(off, op) for _, off, op, kernel in ref_rows if kernel == main][:5]
        ours_top = [(i["pc_offset"], opcode(i["sass"])) for i in stalls["hottest"]
                    if not main or main in i.get("function", "")][:5]
        # Where our listing has no opcode (no SASS for that module), the offset alone names the
        # instruction: take ncu's opcode for it.
        ncu_opcode = {off: op for _, off, op, kernel in ref_rows if kernel == main}
        ours_top = [(off, op or ncu_opcode.get(off, "")) for off, op in ours_top]
        if len(per_kernel) > 1:
            print(f"  instructions of {main} (ncu's page has {len(per_kernel)} kernels, each "
                  "sampled at its own period)")
        again_path = os.path.join(d, f"ncu_source_again_{n}.csv")
        again_top = None
        if os.path.exists(again_path):
            again_rows = sorted(ncu_instructions(again_path), key=lambda x: -x[0])
            again_top = [(off, op) for _, off, op, kernel in again_rows if kernel == main][:5]
        if ref_top:
            same = len(set(ours_top) & set(ref_top))
            # ncu against itself: a second run that ranks other instructions in its top 5.
            spread = again_top is not None and set(again_top) != set(ref_top)
            same_again = spread and set(ours_top) == set(again_top)
            tied = False
            print(f"  top 5 instructions: ours {[f'0x{o:x} {op}' for o, op in ours_top]}")
            print(f"                      ncu  {[f'0x{o:x} {op}' if o is not None else op for o, op in ref_top]}")
            if again_top is not None:
                print(f"         ncu's 2nd run {[f'0x{o:x} {op}' if o is not None else op for o, op in again_top]}"
                      f" ({'other' if spread else 'the same'} top 5)")
            verdict = ("PASS" if same == 5 else
                       "PASS (ncu's second run's top 5: ncu's runs differ there)" if same_again
                       else "FAIL")
            if same < 5 and not same_again:
                # Each instruction apart, by its share in both tools: where one instruction is
                # swapped at the boundary and both tools' shares of the two are within the
                # half-widths of a 95% binomial interval of each other, neither tool's samples
                # rank them: which one is 5th is sampling noise, and the sets agree up to it.
                ours_share = {(i["pc_offset"],
                               opcode(i["sass"]) or ncu_opcode.get(i["pc_offset"], "")):
                              i["samples"] / ours_total
                              for i in stalls["hottest"]
                              if not main or main in i.get("function", "")}
                main_total = per_kernel.get(main, 0) or 1
                ncu_share = {(off, op): s / main_total for s, off, op, kernel in ref_rows
                             if kernel == main}
                apart = sorted(set(ours_top) ^ set(ref_top))
                def half_width(p, total):
                    return 1.96 * (p * (1 - p) / total) ** 0.5 if total else float("inf")
                shares = {k: (ours_share.get(k), ncu_share.get(k, 0.0)) for k in apart}
                for (off, op), (mine, ref) in shares.items():
                    text = "not listed" if mine is None else f"{100 * mine:.2f}%"
                    print(f"    0x{off:x} {op}: ours {text}, ncu {100 * ref:.2f}%")
                known = [v for v in shares.values() if v[0] is not None]
                if len(known) == len(shares):
                    o = [v[0] for v in known]
                    r = [v[1] for v in known]
                    tied = (same == 4 and
                            max(o) - min(o) <= 2 * half_width(max(o), ours_total) and
                            max(r) - min(r) <= 2 * half_width(max(r), main_total))
                    if tied:
                        verdict = ("PASS (the 5th is a tie: the two instructions' shares are "
                                   "within both tools' sampling noise of each other)")
            top_ok[0] += same == 5 or same_again or tied
            top_ok[1] += 1
            print(f"  top 5 in common: {same}/5: {verdict}")
        c = costs.get(n)
        if c and None not in (c.get("plain"), c.get("stalls"), c.get("alone"), c.get("ncu")):
            added, ncu_added = c["stalls"] - c["plain"], c["ncu"] - c["alone"]
            if c.get("added") is not None and c.get("ncu_added") is not None:
                added, ncu_added = c["added"], c["ncu_added"]  # paired rounds
            ok = ncu_added > 0 and added <= ncu_added / 5
            cost_ok[0] += ok
            cost_ok[1] += 1
            print(f"  cost: ours adds {added:.2f} s, ncu's sections {ncu_added:.2f} s "
                  f"({added / ncu_added:.2f} of it): {'PASS' if ok else 'FAIL'}")
            if runs.get(n):
                print(f"        runs (s): {runs[n]}")
        n += 1
    print()
    for name, (good, total) in (("reasons within 5 points", reasons_ok),
                                ("top 5 instructions the same", top_ok),
                                ("cost at most a fifth of ncu's (per point; issue 40 judges the seed sweep's and the program's)", cost_ok)):
        print(f"{name}: {good}/{total} points: {'PASS' if total and good == total else 'FAIL'}")


if __name__ == "__main__":
    main()
