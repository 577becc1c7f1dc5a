#!/usr/bin/env python3
"""A PyTorch program to profile, shaped like real work: an MLP block (Linear -> GELU -> Linear,
residual, LayerNorm) in FP16, forward and backward for a few steps with SGD, then the forward
captured in a CUDA graph and replayed. Everything runs cold, as a user starts it (the first
launch of each kernel loads its module lazily). Prints one checksum line of every output, which
profiling must leave bit-identical:

    python3 scripts/programs/mlp_block.py [--steps 3] [--replays 4] [--no-graph]
"""
import argparse
import hashlib

import torch


class Block(torch.nn.Module):
    def __init__(self, width, hidden):
        super().__init__()
        self.up = torch.nn.Linear(width, hidden)
        self.down = torch.nn.Linear(hidden, width)
        self.norm = torch.nn.LayerNorm(width)

    def forward(self, x):
        return self.norm(x + self.down(torch.nn.functional.gelu(self.up(x))))


def digest(hash_, tensor):
    hash_.update(tensor.detach().float().cpu().numpy().tobytes())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--replays", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=8192)
    parser.add_argument("--width", type=int, default=2048)
    parser.add_argument("--no-graph", action="store_true", help="capture without replaying")
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    device = torch.device("cuda")
    block = Block(args.width, 4 * args.width).to(device).half()
    optimizer = torch.optim.SGD(block.parameters(), lr=1e-3)
    x = torch.randn(args.tokens, args.width, device=device, dtype=torch.float16)
    target = torch.randn_like(x)
    hash_ = hashlib.sha256()
    for _ in range(args.steps):
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(block(x).float(), target.float())
        loss.backward()
        optimizer.step()
        digest(hash_, loss)
    # The forward as a CUDA graph: captured on a side stream, replayed on new inputs.
    static_x = x.clone()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.no_grad(), torch.cuda.stream(stream):
        block(static_x)  # warm-up on the capture stream, as PyTorch asks
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(graph):
        static_y = block(static_x)
    if not args.no_graph:
        for r in range(args.replays):
            static_x.copy_(x * (1.0 + 0.125 * r))
            graph.replay()
            digest(hash_, static_y)
    torch.cuda.synchronize()
    for p in block.parameters():
        digest(hash_, p)
    print(f"mlp_block: checksum {hash_.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
