#!/usr/bin/env python3
"""Two XLA autotuner logs compared (--xla_gpu_dump_autotune_logs_to=FILE.txt, which
scripts/floor_check.sh keeps for a JAX program alone and under `profile`): for each instruction
the autotuner timed, whether the fastest candidate is the same config in both, and how the time
of each candidate timed in both moved.

    python3 scripts/autotune_logs.py A.txt B.txt

Prints the instructions, how many chose another fastest config (with the three fastest of each
where they differ), and the median and 10th/90th percentiles of B's time minus A's per candidate
(candidates over 50 ms, timed-out measurements, left out and counted). Exits 2 with one line when
a file cannot be read or holds no instruction.
"""
import re
import statistics
import sys

LONG = 0.05  # seconds: a candidate time this long is a timed-out measurement, not the kernel's


def parse(path):
    """{fingerprint: [(seconds, config text), ...]} of an AutotuningLogs text proto."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    out = {}
    for block in re.split(r"\ninstruction_profiles \{", text)[1:]:
        found = re.search(r'hlo_fingerprint: "([0-9a-f]+)"', block)
        if not found:
            continue
        profiles = []
        for profile in re.split(r"\n  config_profiles \{", block)[1:]:
            t = re.search(r"run_time \{\s*(?:seconds: (\d+)\s*)?(?:nanos: (\d+))?", profile)
            if not t:
                continue
            seconds = int(t.group(1) or 0) + int(t.group(2) or 0) * 1e-9
            config = re.sub(r"\s+", " ", profile[:profile.find("run_time")]).strip()
            profiles.append((seconds, config))
        out[found.group(1)] = profiles
    return out


def main():
    if len(sys.argv) != 3:
        print("usage: autotune_logs.py A.txt B.txt", file=sys.stderr)
        return 2
    try:
        a, b = parse(sys.argv[1]), parse(sys.argv[2])
    except OSError as error:
        print(f"autotune_logs.py: {error}", file=sys.stderr)
        return 2
    if not a or not b:
        print("autotune_logs.py: no instruction profiles in "
              f"{sys.argv[1] if not a else sys.argv[2]}", file=sys.stderr)
        return 2
    common = [k for k in a if k in b]
    differ = 0
    moves, long = [], 0
    for key in common:
        fastest_a, fastest_b = min(a[key]), min(b[key])
        if fastest_a[1] != fastest_b[1]:
            differ += 1
            print(f"{key}: another fastest config")
            for name, profiles in (("A", a[key]), ("B", b[key])):
                best = ", ".join(f"{t * 1e6:.2f} µs" for t, _ in sorted(profiles)[:3])
                print(f"  {name}: {best}")
        times_b = {config: t for t, config in b[key]}
        for t, config in a[key]:
            if config in times_b:
                if t > LONG or times_b[config] > LONG:
                    long += 1
                else:
                    moves.append((times_b[config] - t) * 1e6)
    print(f"instructions in both: {len(common)}; another fastest config: {differ}")
    if moves:
        moves.sort()
        print(f"candidate time, B minus A: median {statistics.median(moves):+.2f} µs, 10th "
              f"percentile {moves[len(moves) // 10]:+.2f}, 90th {moves[9 * len(moves) // 10]:+.2f} "
              f"({len(moves)} candidates; {long} over {LONG * 1e3:.0f} ms left out)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
