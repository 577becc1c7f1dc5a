#!/usr/bin/env python3
"""A PyTorch program to profile, shaped like real work: a two-layer GPT block (LayerNorm, causal
self-attention through SDPA, a GELU MLP, residuals) in FP16, compiled with
torch.compile(mode="reduce-overhead"): Inductor's Triton kernels, cuBLAS GEMMs and SDPA replayed
through CUDA graph trees. It runs inference batches, then a few training steps (forward and
backward graphs), started cold as a user starts it. Each model call is inside an NVTX range
("infer i", "train i"), and the program is deterministic: it prints one checksum line of every
output, which profiling must leave bit-identical.

    python3 scripts/programs/gpt_compiled.py [--infer 8] [--train 3] [--no-compile] [--probe]

--probe launches, after each model call, a kernel that reads 256 MiB and stores nothing
(`probe_read_only`): whatever DRAM writes a profiler counts during it are write-backs of lines
left dirty in L2 before it, i.e. what the profiler's cache flush before that kernel left behind.
It changes no output and no checksum.
"""
import argparse
import hashlib
import os

# Deterministic kernels (cuBLAS's workspace, attention's backward), so that two runs print the
# same checksum and profiling can be held to it.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class Attention(torch.nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.out = torch.nn.Linear(width, width)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        shape = (b, t, self.heads, c // self.heads)
        q, k, v = (u.view(shape).transpose(1, 2) for u in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, t, c))


class Layer(torch.nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.norm1 = torch.nn.LayerNorm(width)
        self.attn = Attention(width, heads)
        self.norm2 = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class Gpt(torch.nn.Module):
    def __init__(self, layers, width, heads):
        super().__init__()
        self.layers = torch.nn.ModuleList(Layer(width, heads) for _ in range(layers))
        self.norm = torch.nn.LayerNorm(width)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


def storeless_probe(device, mebibytes=256):
    """A launcher of a Triton kernel that reads MEBIBYTES of zeros and stores nothing (its one
    store is masked by `sum != sum`, false for zeros)."""
    import triton
    import triton.language as tl

    @triton.jit
    def probe_read_only(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        total = tl.sum(tl.load(x_ptr + offsets, mask=offsets < n, other=0.0))
        tl.store(out_ptr, total, mask=total != total)

    x = torch.zeros(mebibytes * 2**20 // 4, device=device, dtype=torch.float32)
    out = torch.zeros(1, device=device)
    block = 4096
    grid = (triton.cdiv(x.numel(), block),)
    return lambda: probe_read_only[grid](x, out, x.numel(), BLOCK=block)


def digest(hash_, tensor):
    hash_.update(tensor.detach().float().cpu().numpy().tobytes())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--infer", type=int, default=8, help="inference batches")
    parser.add_argument("--train", type=int, default=3, help="training steps")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--no-compile", action="store_true", help="eager, for comparison")
    parser.add_argument("--probe", action="store_true",
                        help="a storeless 256 MiB read after each model call")
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    device = torch.device("cuda")
    model = Gpt(args.layers, args.width, args.heads).to(device).half()
    run = model if args.no_compile else torch.compile(model, mode="reduce-overhead")
    probe = storeless_probe(device) if args.probe else (lambda: None)
    hash_ = hashlib.sha256()
    inputs = [torch.randn(args.batch, args.seq, args.width, device=device, dtype=torch.float16)
              for _ in range(4)]
    # Inference: the first calls compile and capture (warm-up); the later ones replay.
    with torch.no_grad():
        for i in range(args.infer):
            torch.cuda.nvtx.range_push(f"infer {i}")
            y = run(inputs[i % len(inputs)])
            digest(hash_, y)
            torch.cuda.nvtx.range_pop()
            probe()
    # Training: forward and backward graphs of the same module, SGD on the parameters.
    model.train()
    train = model if args.no_compile else torch.compile(model, mode="reduce-overhead")
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
    target = torch.randn_like(inputs[0])
    for i in range(args.train):
        torch.cuda.nvtx.range_push(f"train {i}")
        optimizer.zero_grad(set_to_none=True)
        loss = F.mse_loss(train(inputs[i % len(inputs)]).float(), target.float())
        loss.backward()
        optimizer.step()
        digest(hash_, loss)
        torch.cuda.nvtx.range_pop()
        probe()
    torch.cuda.synchronize()
    for p in model.parameters():
        digest(hash_, p)
    print(f"gpt_compiled: checksum {hash_.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
