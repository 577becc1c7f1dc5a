#!/usr/bin/env python3
"""How evenly flash-v3 forward's work items spread over the SMs, by a model (no GPU).

    python3 scripts/schedule_model.py [--sms 132] [--cta-cost 1.0] [--item-cost 0.1]
                                      [--split 3] [--combine-cost 1.0]

A work item is one query tile of 128 rows of one head; its length is its key tiles (all of them,
or up to the diagonal when causal). Items come in today's launch order: head by head, longest
first within a head when causal. Each column is the makespan over the ideal (total work / SMs):
  one-per-item  the hardware's greedy CTA scheduler, one CTA per item, each CTA costing
                --cta-cost key tiles beyond its item (its loads, its epilogue, its launch);
  stride        persistent CTAs, item c + k * SMs to CTA c, --item-cost beyond each item;
  counter       persistent CTAs taking the next item from a counter (greedy), the same costs;
  split         the counter, with the last r items cut into --split parts along the keys, each
                part costing --combine-cost key tiles more (writing and combining partial O, m
                and l), r chosen as the best of 0 .. 2 * SMs (shown after the ratio).
The costs are assumptions, not measurements: the model says which schedule can gain, and where.
Prints a table; asserts nothing.
"""
import argparse
import heapq


def items(heads, q_tiles, causal):
    return [(q_tiles - i if causal else q_tiles) for _ in range(heads) for i in range(q_tiles)]


def greedy(lengths, sms, start, per_item):
    finish = [start] * sms
    heapq.heapify(finish)
    for n in lengths:
        heapq.heappush(finish, heapq.heappop(finish) + n + per_item)
    return max(finish)


def split_tail(lengths, sms, start, per_item, parts, combine):
    """The best makespan over r, with the last r items cut into `parts` parts; and that r."""
    best = (greedy(lengths, sms, start, per_item), 0)
    for r in range(1, min(len(lengths), 2 * sms) + 1):
        cut = [n / parts + combine for n in lengths[-r:] for _ in range(parts)]
        best = min(best, (greedy(lengths[:-r] + cut, sms, start, per_item), r))
    return best


def stride(lengths, sms, start, per_item):
    load = [start] * sms
    for i, n in enumerate(lengths):
        load[i % sms] += n + per_item
    return max(load)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sms", type=int, default=132)
    parser.add_argument("--cta-cost", type=float, default=1.0)
    parser.add_argument("--item-cost", type=float, default=0.1)
    parser.add_argument("--split", type=int, default=3)
    parser.add_argument("--combine-cost", type=float, default=1.0)
    args = parser.parse_args()
    if args.sms < 1 or args.split < 1 or min(args.cta_cost, args.item_cost, args.combine_cost) < 0:
        parser.error("--sms and --split must be at least 1, the costs at least 0")
    shapes = [(4, 32, 8192), (8, 16, 2048), (16, 8, 1024), (1, 16, 16384), (4, 16, 16384),
              (2, 8, 4096)]
    print(f"{'B H N':>16} {'mask':>6} {'one-per-item':>13} {'stride':>8} {'counter':>8} "
          f"{'split':>12}")
    for b, h, n in shapes:
        for causal in (False, True):
            lengths = items(b * h, (n + 127) // 128, causal)
            ideal = sum(lengths) / args.sms
            cells = [greedy(lengths, args.sms, 0.0, args.cta_cost),
                     stride(lengths, args.sms, args.cta_cost, args.item_cost),
                     greedy(lengths, args.sms, args.cta_cost, args.item_cost)]
            split, r = split_tail(lengths, args.sms, args.cta_cost, args.item_cost, args.split,
                                  args.combine_cost)
            print(f"{f'B{b} H{h} N{n}':>16} {'causal' if causal else 'full':>6} "
                  + f"{cells[0] / ideal:>13.3f} {cells[1] / ideal:>8.3f} {cells[2] / ideal:>8.3f} "
                  + f"{split / ideal:>7.3f} r={r:<3}")


if __name__ == "__main__":
    main()
