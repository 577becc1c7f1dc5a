#!/usr/bin/env python3
"""False-alarm and detection rates of `compare` on the recordings of scripts/gate_check.sh.

    scripts/gate_rates.py TOOL DIR [DIR...] [-- COMPARE_OPTIONS...]

Each DIR (one call of gate_check.sh; several are pooled) holds a_00.json .. a_NN.json (unchanged code), h_01.json .. h_NN.json (heads with the test
aids), variants.tsv (pair, 5%-slower kernel, 10%-slower kernel, extra-bytes kernel) and
walls.tsv (run, wall seconds, exit code). Every comparison is a `TOOL compare` process with
default options (plus COMPARE_OPTIONS, to study other settings on the same recordings).
Prints one table; the per-pair details go to the first DIR's rates_detail.txt.
"""
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path


def compare(tool, base, head, extra, kernel=None):
    args = [tool, "compare", str(base), str(head), "--json", "-", *extra]
    if kernel:
        args += ["--kernel-base", kernel, "--kernel-head", kernel]
    t = time.monotonic()
    p = subprocess.run(args, capture_output=True, text=True)
    wall = time.monotonic() - t
    if p.returncode not in (0, 1):
        sys.exit(f"compare {base.name} {head.name}: exit {p.returncode}: {p.stderr.strip()}")
    return p.returncode, json.loads(p.stdout), wall


def quantity(row, qid):
    for q in row["quantities"]:
        if q["id"] == qid:
            return q
    return None


def pct(x):
    return f"{100 * x:+.1f}%"


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[: argv.index("--")]
    if len(argv) < 2:
        sys.exit(__doc__)
    tool, dirs = argv[0], [Path(d) for d in argv[1:]]
    # Pairs of every DIR, named by DIR / run; walls keyed the same way.
    walls, variants = {}, []
    for rec in dirs:
        for line in (rec / "walls.tsv").read_text().splitlines():
            name, wall, _ = line.split("\t")
            walls[rec / name] = float(wall)
        variants += [[rec, *line.split("\t")]
                     for line in (rec / "variants.tsv").read_text().splitlines()]
    detail = []

    # A/A: consecutive independent processes of unchanged code.
    aa_exit, aa_rows, aa_not_same, aa_verdicts, aa_flags = 0, 0, 0, {}, {}
    for rec, n, *_ in variants:
        prev = f"{int(n) - 1:02d}"
        code, c, _ = compare(tool, rec / f"a_{prev}.json", rec / f"a_{n}.json", extra)
        aa_exit += code == 1
        for row in c["rows"]:
            aa_rows += 1
            if row["verdict"] != "same":
                aa_not_same += 1
                aa_verdicts[row["verdict"]] = aa_verdicts.get(row["verdict"], 0) + 1
                t = row["time"]
                detail.append(f"A/A {rec.name}/a_{prev} a_{n}: {row['kernel_head']} "
                              f"N{row['workload']['seq_len']} {'causal ' if row['workload']['causal'] else ''}"
                              f"{row['workload']['pass']}: {row['verdict']} {pct(t['relative_change'])} "
                              f"se {100 * t['standard_error']:.2f}% p {t['p_value']:.3g}")
            for q in row["quantities"]:
                if q["increased"]:
                    aa_flags[q["id"]] = aa_flags.get(q["id"], 0) + 1
                    detail.append(f"A/A {rec.name}/a_{prev} a_{n}: {row['kernel_head']} "
                                  f"N{row['workload']['seq_len']} {row['workload']['pass']}: more "
                                  f"{q['id']} {pct(q['relative_change'])} (margin {100 * q['margin']:.1f}%)")
        detail.append(f"A/A {rec.name}/a_{prev} a_{n}: exit {code}, {c['summary']}")

    # A/B: each variant judged on its kernel's rows alone.
    ab = {"slow5": [0, 0, 0, []], "slow10": [0, 0, 0, []], "bytes": [0, 0, 0, [], []]}
    gate_walls = []
    for rec, n, slow5, slow10, extra_kernel in variants:
        base, head = rec / f"a_{n}.json", rec / f"h_{n}.json"
        code, c, wall = compare(tool, base, head, extra)
        gate_walls.append(walls[rec / f"a_{n}"] + walls[rec / f"h_{n}"] + wall)
        for key, kernel in (("slow5", slow5), ("slow10", slow10), ("bytes", extra_kernel)):
            code, c, _ = compare(tool, base, head, extra, kernel)
            entry = ab[key]
            entry[0] += code == 1
            for row in c["rows"]:
                entry[1] += 1
                if key == "bytes":
                    entry[2] += row["more_work"]
                    for qid, out in (("l2_bytes", entry[3]), ("dram_read_bytes", entry[4])):
                        q = quantity(row, qid)
                        if q:
                            out.append(q["relative_change"])
                else:
                    entry[2] += row["verdict"] == "slower"
                    entry[3].append(row["time"]["relative_change"])
            detail.append(f"A/B {rec.name}/a_{n} h_{n} {key} {kernel}: exit {code}, {c['summary']}")

    k = len(variants)
    print(f"gate check: {k} A/A and {k} A/B pairs of independent processes, `run --pass fwd,bwd` "
          f"(default options){', compare ' + ' '.join(extra) if extra else ''}")
    print()
    print("| check | pairs | exit 1 | rows flagged | measured change (median over rows) |")
    print("| --- | ---: | ---: | --- | --- |")
    other = ", ".join(f"{n} {v}" for v, n in sorted(aa_verdicts.items()))
    flags = ", ".join(f"{n} more {q}" for q, n in sorted(aa_flags.items()))
    print(f"| A/A, unchanged code | {k} | {aa_exit} of {k} (false alarms) | not `same`: "
          f"{aa_not_same} of {aa_rows} ({100 * aa_not_same / max(aa_rows, 1):.1f}%)"
          f"{' — ' + other if other else ''}{'; ' + flags if flags else ''} | |")
    for key, label in (("slow10", "10% slower kernel"), ("slow5", "5% slower kernel")):
        e = ab[key]
        print(f"| A/B, {label} | {k} | {e[0]} of {k} | `slower`: {e[2]} of {e[1]} rows | "
              f"time {pct(statistics.median(e[3])) if e[3] else '-'} |")
    e = ab["bytes"]
    print(f"| A/B, +12% of model DRAM bytes read | {k} | {e[0]} of {k} | more work: {e[2]} of "
          f"{e[1]} rows | L2 {pct(statistics.median(e[3])) if e[3] else '-'}, DRAM-read "
          f"{pct(statistics.median(e[4])) if e[4] else '-'} |")
    print()
    runs = [w for name, w in walls.items() if name.name.startswith("a_")]
    print(f"one run (`run --pass fwd,bwd`): median {statistics.median(runs):.1f} s, "
          f"max {max(runs):.1f} s")
    if gate_walls:
        print(f"whole gate (base run + head run + compare): median "
              f"{statistics.median(gate_walls):.1f} s, max {max(gate_walls):.1f} s")
    (dirs[0] / "rates_detail.txt").write_text("\n".join(detail) + "\n")


if __name__ == "__main__":
    main()
