#!/usr/bin/env python3
"""Node-by-node agreement of `cuflash-roofline profile` (graph nodes timed: the default) with
Nsight Compute's `--graph-profiling node` on one program.

    python3 scripts/graph_nodes_vs_ncu.py PROFILE.json NCU.csv [--counters NCU_ALL.csv]
                                          [--ncu2 NCU2.csv] [--ncu3 NCU3.csv] [--graphs-only]
                                          [--timed TIMED.json] [--all]

PROFILE.json: `cuflash-roofline profile --json` of a one-process program. NCU.csv: `ncu
--graph-profiling node --cache-control none --clock-control none --csv --page raw --metrics
LIST` of the same program (LIST: `cuflash-roofline metrics --chip GH100 --list`): ncu runs each
node alone, after the node before it, caches as the program left them, as the nodes of a serial
graph run. With --graphs-only, only our graph nodes are paired (for an ncu run filtered to the
replays with --nvtx-include). NCU_ALL.csv: the same with --cache-control all (ncu flushes the
caches before each node, as `profile --cache cold` does before each launch and each node
replay): the reference for DRAM, L2 and FLOPs when given (else NCU.csv is). NCU2.csv: a second
run like the counters' reference, for ncu's own spread. NCU3.csv: a third such run, judged as
ours are (DRAM and L2 against the reference, within 2% or the two runs' spread, on the same
nodes), and its time against the reference's by the time band: what the criteria give a replica
of ncu itself. TIMED.json: a report with graph nodes
(usually PROFILE.json), for the serial-graph check.

Our kernels (plain launches and kernel nodes, graph launches themselves left out) are paired
with ncu's results in order; the nodes of one graph launch are paired with the launch's results
by kernel name, grid and block (parallel branches may run in another order). Printed:
  time: kernels >= 20 us within 5% of ncu's gpu__time_duration, below 20 us within 2 us + 10%
  (graph nodes apart from plain launches, and apart the nodes that ran beside other nodes of
  their launch for longer than that band: ncu runs each node alone); counted nodes' replays
  alone (replay_time_seconds) against the counters' reference (NCU_ALL.csv: ncu flushes the caches, as before a replay);
  DRAM and L2: within 2% (or within ncu's own run-to-run spread, with --ncu2) on kernels that
  move >= 10 MB; where the program ran the storeless probe (gpt_compiled.py --probe), DRAM again
  with the reference's writes on the nearest probe beyond ours allowed below it (they are
  write-backs of lines its cache flush left dirty, not the kernel's); tensor FLOPs exact (rows with counters: plain launches);
  NVTX: the share of node time whose row names an NVTX range;
  serial graphs (TIMED.json): each graph launch's time against the sum of its nodes' times,
  and against that sum plus the time inside the launch when no node ran (graph_idle_seconds).
A line per node that misses a criterion (every node with --all). Asserts nothing.
"""
import collections
import json
import math
import sys

from ncu_compare import read_ncu, scaled
from profile_vs_ncu import ncu_quantities, ours_quantities, ratio

NAN = float("nan")
BIG = 10e6  # bytes: the nodes whose DRAM and L2 are judged
PROBE = "probe_read_only"  # gpt_compiled.py --probe: reads 256 MiB, stores nothing


def args_of(argv):
    opts = {"--ncu2": None, "--ncu3": None, "--timed": None, "--counters": None}
    flags = set()
    positional = []
    it = iter(argv)
    for a in it:
        if a in opts:
            opts[a] = next(it)
        elif a.startswith("--"):
            flags.add(a)
        else:
            positional.append(a)
    return positional, opts, flags


def our_kernels(path, graphs_only):
    """Our kernels in launch order: plain launches and kernel nodes, each with its graph launch
    (its index, or None) and its quantities."""
    out = []
    for r in json.load(open(path))["rows"]:
        launch = r["launch"]
        if launch.get("graph"):
            continue
        kind = launch.get("node_kind")
        if kind and kind != "kernel":
            continue
        if graphs_only and not kind:
            continue
        replay = r.get("counters", {}).get("replay_time_seconds")
        write = r.get("counters", {}).get("dram_write_bytes")
        clock = r.get("counters", {}).get("sm_clock_hz")
        out.append({"kernel": r["kernel"], "graph": launch["index"] if kind else None,
                    "q": ours_quantities(r), "range": launch.get("nvtx_range", ""),
                    "write": write if isinstance(write, (int, float)) else NAN,
                    "status": r["status"],
                    "clock": clock if isinstance(clock, (int, float)) else NAN,
                    "node": (launch.get("graph_id"), launch.get("node_position")) if kind else None,
                    "replay": replay if isinstance(replay, (int, float)) else NAN,
                    "shape": (tuple(launch.get("grid") or ()), tuple(launch.get("block") or ())),
                    "span": (launch.get("gpu_start_ns"), launch.get("gpu_end_ns")),
                    "shared": r.get("counters", {}).get("graph_shared_seconds")})
    # A node's time shared with other kernel nodes of its graph launch (parallel branches, and
    # the next node starting while a node's last CTAs still run): ncu runs each node alone.
    # The report's graph_shared_seconds where it has it, else from the nodes' spans.
    by_launch = collections.defaultdict(list)
    for o in out:
        if isinstance(o["shared"], (int, float)):
            continue
        o["shared"] = 0.0
        if o["graph"] is not None and None not in o["span"]:
            by_launch[o["graph"]].append(o)
    for nodes in by_launch.values():
        nodes.sort(key=lambda n: n["span"][0])
        for o in nodes:
            (s, e) = o["span"]
            covered, shared = s, 0
            for p in nodes:  # the others' spans clipped to this one, each instant once
                if p is o:
                    continue
                lo, hi = max(p["span"][0], covered), min(p["span"][1], e)
                if hi > lo:
                    shared, covered = shared + hi - lo, hi
            o["shared"] = shared * 1e-9
    return out


def why_missed(o, t, tr, row, units, clock_row=None, shared=0.0, alone_ref=NAN):
    """Why our time t of kernel o misses the reference's tr (its ncu result `row`): the node
    ran beside other nodes of its graph launch for `shared` seconds of t, the same
    cycles at another SM clock (ncu's clock from `clock_row`, the same node in the counters'
    reference, where the time reference did not read it), the reference's flush leaving lines
    dirty for the kernel to write back (1 MB or more of DRAM writes beyond ours), the node's
    replay alone within the band of `alone_ref` (ncu's time in the counters' reference, which
    flushes the caches as the replay does: the graph's own condition differs, not the
    measurement), or neither."""
    clock = scaled(row, units, "sm__cycles_elapsed.avg.per_second")
    if not clock > 0 and clock_row is not None:
        clock = scaled(*clock_row, "sm__cycles_elapsed.avg.per_second")
    limit = 0.05 * tr if tr >= 20e-6 else 2e-6 + 0.10 * tr
    if shared > 0 and abs(t - shared - tr) <= limit:
        return "sharing the GPU with other nodes of its launch (its time not shared within the band)"
    if shared > limit:
        return "beside other nodes of its launch beyond the band (concurrent branches; ncu runs it alone)"
    if clock > 0 and o["clock"] > 0 and abs(t * o["clock"] / clock - tr) <= limit:
        return "at another SM clock (the same cycles within the band)"
    if scaled(row, units, "dram__bytes_write.sum") - o["write"] >= 1e6:
        return "after ncu's flush left >= 1 MB of lines dirty (its DRAM writes beyond ours)"
    if alone_ref > 0 and not math.isnan(o["replay"]):
        band = 0.05 * alone_ref if alone_ref >= 20e-6 else 2e-6 + 0.10 * alone_ref
        if abs(o["replay"] - alone_ref) <= band:
            return "in the graph's own condition (its replay alone agrees with ncu's flushed run)"
    return "neither"


def short(name):
    """The kernel's short name in an ncu result's demangled name."""
    base = name.split("(")[0]
    base = base.split("<")[0].split(" ")[-1]
    return base.split("::")[-1]


def shape_of(row):
    """An ncu result's (grid, block), as our rows write them."""
    def dims(text):
        try:
            return tuple(int(x) for x in text.strip("() ").split(","))
        except ValueError:
            return ()
    return dims(row.get("Grid Size", "")), dims(row.get("Block Size", ""))


def pair(ours, ncu):
    """[(our kernel, ncu quantities)] in order; a graph launch's nodes matched by name (and by
    grid and block where the ncu entry has them: kernels of one name on tensors of different
    sizes, whose order parallel branches may change) among as many ncu results as it has
    nodes. ncu entries: (name, quantities[, (grid, block)])."""
    pairs, j, i = [], 0, 0
    while i < len(ours):
        o = ours[i]
        if o["graph"] is None:
            if j >= len(ncu):
                break
            if o["kernel"].split("::")[-1] not in ncu[j][0]:
                print(f"name mismatch at our kernel {i}: {o['kernel']!r} against "
                      f"{ncu[j][0][:60]!r}: pairing stops here")
                break
            pairs.append((o, ncu[j][1]))
            i += 1
            j += 1
            continue
        group = [o]
        while i + len(group) < len(ours) and ours[i + len(group)]["graph"] == o["graph"]:
            group.append(ours[i + len(group)])
        window = ncu[j:j + len(group)]
        if len(window) < len(group):
            break
        unused = list(range(len(window)))
        for node in group:
            name = node["kernel"].split("::")[-1]
            hit = next((k for k in unused if name in window[k][0] and len(window[k]) > 2
                        and window[k][2] == node["shape"]), None)
            if hit is None:
                hit = next((k for k in unused if name in window[k][0]), None)
            if hit is None:
                print(f"graph launch {o['graph']}: no ncu result named like {name!r}")
                continue
            unused.remove(hit)
            pairs.append((node, window[hit][1]))
        i += len(group)
        j += len(group)
    return pairs


def main():
    positional, opts, flags = args_of(sys.argv[1:])
    if len(positional) != 2:
        print(__doc__)
        sys.exit(2)
    ours = our_kernels(positional[0], "--graphs-only" in flags)
    rows, units = read_ncu(positional[1])
    ncu = [(r.get("Kernel Name", ""), ncu_quantities(r, units), shape_of(r)) for r in rows]
    raw_of = {id(q): (r, units) for r, (_, q, _) in zip(rows, ncu)}
    spread = None
    if opts["--ncu2"]:
        rows2, units2 = read_ncu(opts["--ncu2"])
        spread = [ncu_quantities(r, units2) for r in rows2]
    nodes = sum(o["graph"] is not None for o in ours)
    print(f"ours: {len(ours)} kernels ({nodes} graph nodes); ncu: {len(ncu)} results")
    pairs = pair(ours, ncu)
    cref = ncu
    crows, cunits = rows, units
    if opts["--counters"]:
        crows, cunits = read_ncu(opts["--counters"])
        cref = [(r.get("Kernel Name", ""), ncu_quantities(r, cunits), shape_of(r)) for r in crows]
        raw_of.update({id(q): (r, cunits) for r, (_, q, _) in zip(crows, cref)})
    cpairs = dict((id(o), q) for o, q in pair(ours, cref))
    index_of = {id(entry[1]): k for k, entry in enumerate(cref)}
    # The storeless probe (gpt_compiled.py --probe): the DRAM writes the reference counts during
    # a kernel that stores nothing, beyond ours, are write-backs of lines its flush left dirty.
    ref_writes = [scaled(r, cunits, "dram__bytes_write.sum") for r in crows]
    position = {id(o): i for i, o in enumerate(ours)}
    foreign = []  # (our position, the reference's writes beyond ours on the probe)
    for o in ours:
        ref = cpairs.get(id(o))
        if o["kernel"].startswith(PROBE) and ref is not None and id(ref) in index_of:
            foreign.append((position[id(o)], ref_writes[index_of[id(ref)]] - o["write"]))

    def foreign_near(i):
        """The larger foreign write-back of the probes just before and just after position i."""
        near = [f for p, f in foreign if p <= i][-1:] + [f for p, f in foreign if p >= i][:1]
        return max(near) if near else 0.0

    banded = {kind: [0, 0] for kind in ("graph nodes", "plain launches")}
    time_ok = {"graph nodes": [0, 0], "plain launches": [0, 0]}
    replay_ok = [0, 0]  # graph nodes' replays alone against the counters' reference
    alone_ok = [0, 0]  # graph nodes that shared no more of their time than the band with others
    judged = {kind: {"DRAM": [0, 0], "L2": [0, 0], "tensor": [0, 0]}
              for kind in ("graph nodes", "plain launches")}
    spread_used = 0
    nvtx_time = total_time = 0.0
    time_misses = {"graph nodes": [], "plain launches": [], "graph node replays": []}
    # ncu's L2 bytes of each graph node over every result it gave the same node (its graph's
    # replays, both runs): the range a node's L2 takes from run to run, beside the two-run spread.
    node_l2 = collections.defaultdict(list)
    by_id = {id(o): o for o in ours}
    for key, q in cpairs.items():
        o = by_id[key]
        if o["node"] is not None and not math.isnan(q[2]):
            node_l2[o["node"], o["kernel"]].append(q[2])
    if spread is not None:
        for o, q in pair(ours, [(entry[0], s2) + tuple(entry[2:]) for entry, s2 in zip(cref, spread)]):
            if o["node"] is not None and not math.isnan(q[2]):
                node_l2[o["node"], o["kernel"]].append(q[2])
    in_range = [0, 0]
    for o, tref in pairs:
        mine = o["q"]
        kind = "graph nodes" if o["graph"] is not None else "plain launches"
        t, tr = mine[0], tref[0]
        cells, good = [], True
        if not (math.isnan(t) or math.isnan(tr)):
            limit = 0.05 * tr if tr >= 20e-6 else 2e-6 + 0.10 * tr
            ok = abs(t - tr) <= limit
            time_ok[kind][0] += ok
            time_ok[kind][1] += 1
            if kind == "graph nodes" and o["shared"] <= limit:
                alone_ok[0] += ok
                alone_ok[1] += 1
            if not ok:
                cref_of = cpairs.get(id(o))
                time_misses[kind].append(why_missed(
                    o, t, tr, *raw_of[id(tref)],
                    clock_row=raw_of.get(id(cref_of)) if cref_of is not None else None,
                    shared=o["shared"],
                    alone_ref=cref_of[0] if cref_of is not None and cref_of is not tref else NAN))
            good = good and ok
            cells.append(f"{ratio(t, tr):.3f}{'' if ok else '!'}")
        else:
            cells.append("-")
        if o["graph"] is not None and not math.isnan(t):
            total_time += t
            nvtx_time += t if o["range"] else 0
        ref = cpairs.get(id(o))
        if ref is not None and not (math.isnan(o["replay"]) or math.isnan(ref[0])):
            limit = 0.05 * ref[0] if ref[0] >= 20e-6 else 2e-6 + 0.10 * ref[0]
            replay_ok[0] += abs(o["replay"] - ref[0]) <= limit
            replay_ok[1] += 1
            if abs(o["replay"] - ref[0]) > limit:
                time_misses["graph node replays"].append(
                    why_missed(o, o["replay"], ref[0], *raw_of[id(ref)]))
        for qi, name in ((1, "DRAM"), (2, "L2"), (3, "tensor")):
            x, y = mine[qi], ref[qi] if ref is not None else NAN
            if math.isnan(x) or math.isnan(y) or (x == 0 and y == 0):
                cells.append("-")
                continue
            r = ratio(x, y)
            if name == "tensor":
                ok, counted = r == 1.0, y > 0
            else:
                ok, counted = abs(r - 1) <= 0.02, y >= BIG
                k = index_of.get(id(ref))
                if not ok and counted and spread is not None and k is not None and k < len(spread):
                    own = ratio(spread[k][qi], y)  # ncu's second run over its first
                    if abs(r - 1) <= abs(own - 1) + 0.005:
                        ok = True
                        spread_used += 1
            if counted and name == "DRAM" and foreign:
                # Below the reference by no more than its foreign write-backs (and 2%) passes too.
                band = ok or y * 0.98 - foreign_near(position[id(o)]) <= x <= y * 1.02
                banded[kind][0] += band
                banded[kind][1] += 1
            if counted and name == "L2" and o["node"] is not None:
                seen = node_l2.get((o["node"], o["kernel"]), [y])
                in_range[0] += ok or min(seen) * 0.98 <= x <= max(seen) * 1.02
                in_range[1] += 1
            if counted:
                judged[kind][name][0] += ok
                judged[kind][name][1] += 1
                good = good and ok
            cells.append(f"{r:.4f}{'' if ok or not counted else '!'}")
        if "--all" in flags or not good:
            print(f"  {o['kernel'][:44]:44} {t * 1e6:9.2f} {tr * 1e6:9.2f} us "
                  + " ".join(f"{c:>8}" for c in cells) + f"  {o['status']}")
    print(f"paired: {len(pairs)} of our {len(ours)} kernels")
    for kind, (n_ok, n) in time_ok.items():
        if n:
            print(f"time, {kind}: {n_ok}/{n} within 5% (>= 20 us) or 2 us + 10% (< 20 us) of "
                  f"ncu's gpu__time_duration ({100 * n_ok / n:.1f}%)")
    if alone_ok[1] < time_ok["graph nodes"][1]:
        print(f"time, graph nodes that ran beside other nodes of their launch for no more than "
              f"the band: {alone_ok[0]}/{alone_ok[1]} within it"
              + (f" ({100 * alone_ok[0] / alone_ok[1]:.1f}%)" if alone_ok[1] else "")
              + f"; {time_ok['graph nodes'][1] - alone_ok[1]} ran beside others for longer "
              "(concurrent branches: ncu's one-at-a-time time is not theirs; their replays are)")
    if replay_ok[1]:
        print(f"time, graph nodes replayed alone (replay_time_seconds, after the cold flush): "
              f"{replay_ok[0]}/{replay_ok[1]} within 5% or 2 us + 10% of ncu's "
              f"gpu__time_duration in the counters' reference "
              f"({100 * replay_ok[0] / replay_ok[1]:.1f}%)")
    print("counters (rows that have them; profiled with a cold cache unless --cache warm; ncu "
          + ("with --cache-control all" if opts["--counters"] else "as NCU.csv ran") + "):")
    for kind, by_name in judged.items():
        for name, (n_ok, n) in by_name.items():
            scope = "with tensor work, exact" if name == "tensor" else \
                f"of >= {BIG / 1e6:.0f} MB within 2%" + \
                (" or ncu's own spread" if spread is not None else "")
            pct = f" ({100 * n_ok / n:.1f}%)" if n else ""
            print(f"{name}, {kind}: {n_ok}/{n} {scope}{pct}")
    if spread is not None:
        print(f"  ({spread_used} of those passed by ncu's own spread, not by 2%)")
    if spread is not None and opts["--ncu3"]:
        rows3, units3 = read_ncu(opts["--ncu3"])
        third = [(r.get("Kernel Name", ""), ncu_quantities(r, units3), shape_of(r)) for r in rows3]
        replica = {kind: {"time": [0, 0], "DRAM": [0, 0], "L2": [0, 0]} for kind in judged}
        for o, _ in pairs:
            ref = cpairs.get(id(o))
            k = index_of.get(id(ref)) if ref is not None else None
            if k is None or k >= len(spread) or k >= len(third) or third[k][2] != cref[k][2]:
                continue
            kind = "graph nodes" if o["graph"] is not None else "plain launches"
            t3, tr = third[k][1][0], ref[0]
            if not (math.isnan(t3) or math.isnan(tr)):
                replica[kind]["time"][0] += abs(t3 - tr) <= (0.05 * tr if tr >= 20e-6 else
                                                             2e-6 + 0.10 * tr)
                replica[kind]["time"][1] += 1
            for qi, name in ((1, "DRAM"), (2, "L2")):
                x, y = third[k][1][qi], ref[qi]
                if math.isnan(x) or math.isnan(y) or y < BIG:
                    continue
                r, own = ratio(x, y), ratio(spread[k][qi], y)
                replica[kind][name][0] += abs(r - 1) <= 0.02 or abs(r - 1) <= abs(own - 1) + 0.005
                replica[kind][name][1] += 1
        for kind, by_name in replica.items():
            for name, (n_ok, n) in by_name.items():
                if n:
                    rule = ("within 5% (>= 20 us) or 2 us + 10% of the counters' reference's time"
                            if name == "time" else "by the same rule")
                    print(f"{name}, {kind}: ncu's third run {rule}: {n_ok}/{n} "
                          f"({100 * n_ok / n:.1f}%)")
    if in_range[1]:
        print(f"L2, graph nodes: {in_range[0]}/{in_range[1]} of >= {BIG / 1e6:.0f} MB within 2% of "
              f"the range ncu gave the same node over its runs and its graph's replays "
              f"({100 * in_range[0] / in_range[1]:.1f}%; not the criterion: its spread "
              f"between runs)")
    for kind, misses in time_misses.items():
        if misses:
            kinds = collections.Counter(misses)
            print(f"time misses, {kind}: " + ", ".join(f"{n} {why}" for why, n in
                                                       kinds.most_common()))
    if foreign:
        probe_rows = [o for o in ours if o["kernel"].startswith(PROBE)]
        ours_w = [o["write"] / 1e6 for o in probe_rows]
        ref_w = [f / 1e6 + w for (_, f), w in zip(foreign, ours_w)]
        print(f"storeless probe ({PROBE}, {len(foreign)} launches, stores nothing): DRAM writes "
              f"ours {min(ours_w):.3f}-{max(ours_w):.3f} MB, the reference's "
              f"{min(ref_w):.3f}-{max(ref_w):.3f} MB")
        for kind, (n_ok, n) in banded.items():
            if n:
                print(f"DRAM, {kind}: {n_ok}/{n} of >= {BIG / 1e6:.0f} MB within 2%"
                      + (", ncu's own spread" if spread is not None else "")
                      + " or below the reference by no more than the writes it counted on the "
                      f"nearest probe ({100 * n_ok / n:.1f}%)")
    if total_time > 0:
        print(f"NVTX: {100 * nvtx_time / total_time:.1f}% of the graph nodes' time is in rows that "
              f"name an NVTX range")
    if opts["--timed"]:
        serial, accounted = [], []
        report = json.load(open(opts["--timed"]))["rows"]
        sums = collections.defaultdict(float)
        for r in report:
            if r["launch"].get("node_kind"):  # kernel, memcpy and memset nodes
                t = r["counters"].get("gpu_time_seconds")
                if isinstance(t, (int, float)):
                    sums[r["launch"]["index"]] += t
        for r in report:
            if r["launch"].get("graph") and r["launch"]["index"] in sums:
                t = r["counters"].get("gpu_time_seconds")
                if isinstance(t, (int, float)) and t > 0:
                    serial.append(sums[r["launch"]["index"]] / t)
                    idle = r["counters"].get("graph_idle_seconds")
                    if isinstance(idle, (int, float)):
                        accounted.append((sums[r["launch"]["index"]] + idle) / t)
        if serial:
            serial.sort()
            within = sum(abs(x - 1) <= 0.05 for x in serial)
            print(f"graph launches: sum of their node times / launch time: median "
                  f"{serial[len(serial) // 2]:.3f}, range {serial[0]:.3f}-{serial[-1]:.3f}; "
                  f"{within}/{len(serial)} within 5%")
        if accounted:
            accounted.sort()
            within = sum(abs(x - 1) <= 0.05 for x in accounted)
            print(f"graph launches: (node times + time no node ran) / launch time: median "
                  f"{accounted[len(accounted) // 2]:.3f}, range {accounted[0]:.3f}-"
                  f"{accounted[-1]:.3f}; {within}/{len(accounted)} within 5% (overlapping "
                  f"branches count twice)")


if __name__ == "__main__":
    main()
