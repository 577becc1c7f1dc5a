#!/usr/bin/env python3
"""`compare` of two `profile` reports (by group of launches, launch_groups.hpp): its false alarms
on unchanged code and what it catches, on reports of real programs.

    python3 scripts/profile_compare_rates.py TOOL DIR [-- COMPARE_OPTIONS...]

DIR holds NAME_1.json, NAME_2.json, ...: `profile` of the same deterministic program in separate
processes of one call (scripts/profile_programs.sh aa writes them). For every program and every
pair of its reports:
  A/A  `TOOL compare a b`: the exit code (1: a false alarm) and the groups not `same`;
  A/B  the same pair with every launch of the head made 5% and 10% slower (its recorded times
       scaled; the noise of the pair is the real one): the groups judged `slower`, by how many
       launches the group has (1, 2-7, 8 or more), and the share of the base's kernel time
       in the groups judged slower.
COMPARE_OPTIONS are passed to every compare (to study --launch-noise and --process-noise on the
same reports). Prints one table. Asserts nothing.
"""
import collections
import itertools
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def compare(tool, base, head, extra):
    p = subprocess.run([tool, "compare", str(base), str(head), "--json", "-", *extra],
                       capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"compare {base} {head}: exit {p.returncode}: {p.stderr.strip()}")
    return p.returncode, json.loads(p.stdout)


def slowed(path, factor, out):
    report = json.load(open(path))
    for row in report["rows"]:
        timing = row.get("timing")
        if timing:
            timing["samples_seconds"] = [t * factor for t in timing["samples_seconds"]]
            for key in ("median_seconds", "min_seconds", "max_seconds"):
                if isinstance(timing.get(key), (int, float)):
                    timing[key] *= factor
        counters = row.get("counters") or {}
        for key in ("gpu_time_seconds", "kernel_execution_seconds"):
            if isinstance(counters.get(key), (int, float)):
                counters[key] *= factor
    json.dump(report, open(out, "w"))


def launches(row):
    m = re.search(r"(\d+) (?:graph )?launch", row.get("point", ""))
    return int(m.group(1)) if m else 1


def size_class(n):
    return "1" if n == 1 else "2-7" if n < 8 else ">=8"


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    if len(argv) != 2:
        print(__doc__)
        sys.exit(2)
    tool, folder = argv[0], Path(argv[1])
    programs = collections.defaultdict(list)
    for f in sorted(folder.glob("*_[0-9]*.json")):
        programs[f.stem.rsplit("_", 1)[0]].append(f)
    print("| program | pairs | A/A exit 1 | A/A groups not same | +5%: groups slower "
          "(1 / 2-7 / >=8 launches; share of the base's time) | +10%: the same |")
    print("| --- | ---: | ---: | ---: | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for name, files in sorted(programs.items()):
            pairs = list(itertools.combinations(files, 2))
            alarms, not_same, groups = 0, 0, 0
            caught = {f: collections.Counter() for f in (1.05, 1.10)}
            total = {f: collections.Counter() for f in (1.05, 1.10)}
            time_caught = {f: 0.0 for f in caught}
            time_total = {f: 0.0 for f in caught}
            for a, b in pairs:
                code, doc = compare(tool, a, b, extra)
                alarms += code == 1
                groups += len(doc["rows"])
                not_same += sum(r["verdict"] != "same" for r in doc["rows"])
                for factor in caught:
                    head = Path(tmp) / f"{b.stem}_x{factor}.json"
                    slowed(b, factor, head)
                    _, slow = compare(tool, a, head, extra)
                    for r in slow["rows"]:
                        if r["verdict"] in ("not compared", "failed"):
                            continue
                        k = size_class(launches(r))
                        total[factor][k] += 1
                        caught[factor][k] += r["verdict"] == "slower"
                        seconds = (r.get("time") or {}).get("base", {}).get("median_seconds") or 0
                        time_total[factor] += seconds * launches(r)
                        time_caught[factor] += seconds * launches(r) * (r["verdict"] == "slower")

            def cells(factor):
                share = 100 * time_caught[factor] / time_total[factor] if time_total[factor] else 0
                return " / ".join(f"{caught[factor][k]} of {total[factor][k]}"
                                  for k in ("1", "2-7", ">=8")) + f" ({share:.0f}% of the time)"
            print(f"| {name} | {len(pairs)} | {alarms} of {len(pairs)} | {not_same} of {groups} | "
                  f"{cells(1.05)} | {cells(1.10)} |")


if __name__ == "__main__":
    main()
