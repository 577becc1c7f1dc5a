#!/usr/bin/env python3
"""A PyTorch program to profile whose CUDA graph has parallel branches on two streams: a stack
of parallel-residual transformer blocks (as in GPT-J and PaLM: x + attn(ln(x)) + mlp(ln(x))),
run as batched inference in FP16. Each block forks its MLP onto a side stream while the
attention (QKV GEMM, SDPA's fused causal kernel, output GEMM) runs on the main stream, and joins
before the residual sum, so the two branches' kernels may run side by side. The whole forward is
captured once as a CUDA graph (both streams in one capture) and replayed for every micro-batch,
each replay's output normalised into the next replay's input. During the capture every module
runs inside an NVTX range of its name ("blocks.0.mlp"); the replays run inside the NVTX range
"replay". Deterministic: prints one checksum line of the final activations, which profiling
must leave bit-identical.

    python3 scripts/programs/parallel_block.py [--steps 8] [--layers 2] [--batch 4]
        [--seq 1024] [--width 2048] [--heads 16] [--no-graph]
"""
import argparse
import hashlib
import os

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from module_ranges import nvtx_hooks  # noqa: E402


class Attention(torch.nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(width, 3 * width, bias=False)
        self.out = torch.nn.Linear(width, width, bias=False)

    def forward(self, x):
        b, t, w = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, w // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(a.transpose(1, 2).reshape(b, t, w))


class Mlp(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = torch.nn.Linear(width, 4 * width)
        self.proj = torch.nn.Linear(4 * width, width)

    def forward(self, x):
        return self.proj(F.gelu(self.fc(x), approximate="tanh"))


class ParallelBlock(torch.nn.Module):
    def __init__(self, width, heads, side):
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.attn = Attention(width, heads)
        self.mlp = Mlp(width)
        self.side = side

    def forward(self, x):
        h = self.norm(x)
        main = torch.cuda.current_stream()
        self.side.wait_stream(main)  # fork: the MLP branch needs h
        with torch.cuda.stream(self.side):
            m = self.mlp(h)
        a = self.attn(h)
        main.wait_stream(self.side)  # join
        return x + a + m


class Model(torch.nn.Module):
    def __init__(self, args, side):
        super().__init__()
        self.blocks = torch.nn.ModuleList(
            ParallelBlock(args.width, args.heads, side) for _ in range(args.layers))
        self.norm = torch.nn.LayerNorm(args.width)

    def step(self, x):
        """One micro-batch on the static tensor x [B, T, W]: the blocks, then the output
        normalised into x (the next micro-batch's input, so the values stay bounded)."""
        h = x
        for block in self.blocks:
            h = block(h)
        x.copy_(self.norm(h))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=8, help="micro-batches (graph replays)")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--width", type=int, default=2048)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--no-graph", action="store_true", help="run the steps eagerly")
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    device = torch.device("cuda")
    with torch.no_grad():
        side = torch.cuda.Stream()
        model = Model(args, side).to(device).half()
        nvtx_hooks(model)
        x = torch.randn(args.batch, args.seq, args.width, device=device, dtype=torch.half)
        # Warm-up on a side stream (PyTorch's rule for capture), undone afterwards.
        x0 = x.clone()
        warm = torch.cuda.Stream()
        warm.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(warm):
            model.step(x)
        torch.cuda.current_stream().wait_stream(warm)
        x.copy_(x0)
        graph = torch.cuda.CUDAGraph()
        if not args.no_graph:
            with torch.cuda.graph(graph):
                model.step(x)
        torch.cuda.nvtx.range_push("replay")
        for _ in range(args.steps):
            if args.no_graph:
                model.step(x)
            else:
                graph.replay()
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        digest = hashlib.sha256(x.float().cpu().numpy().tobytes()).hexdigest()[:16]
    print(f"parallel_block: checksum {digest} mean {x.float().abs().mean().item():.6f}")


if __name__ == "__main__":
    main()
