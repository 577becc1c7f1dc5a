#!/usr/bin/env python3
"""A PyTorch program to profile, shaped like an inference server's decode loop: a small LLM
decoder (RMSNorm, grouped-query attention over a KV cache through SDPA with enable_gqa, a SwiGLU
MLP, greedy sampling) in FP16. One decode step, cache write and next-token embedding included,
is captured once as a CUDA graph and replayed for every new token, as servers do: many nodes of
a few microseconds (norms, element-wise ops, small GEMMs) and attention kernels that stream the
cache. During the capture every module runs inside an NVTX range of its name ("layer0.attn"),
so each graph node carries the module it came from; the replays run inside the NVTX range
"decode". Deterministic: prints one checksum line of the generated tokens and the caches, which
profiling must leave bit-identical.

    python3 scripts/programs/decode_loop.py [--steps 16] [--layers 2] [--batch 8]
        [--attention mask|window]
"""
import argparse
import hashlib
import os

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from module_ranges import nvtx_hooks  # noqa: E402


class RmsNorm(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(width))

    def forward(self, x):
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + 1e-6)).half() * self.weight


class Attention(torch.nn.Module):
    def __init__(self, width, heads, kv_heads, max_len, batch):
        super().__init__()
        self.heads, self.kv_heads, self.dim = heads, kv_heads, width // heads
        self.q = torch.nn.Linear(width, width, bias=False)
        self.kv = torch.nn.Linear(width, 2 * kv_heads * self.dim, bias=False)
        self.out = torch.nn.Linear(width, width, bias=False)
        shape = (batch, kv_heads, max_len, self.dim)
        self.register_buffer("k_cache", torch.zeros(shape), persistent=False)
        self.register_buffer("v_cache", torch.zeros(shape), persistent=False)

    def forward(self, x, pos, mask):
        """mask None: the cache is a window whose every slot holds a token (a ring, written at
        pos modulo its length), attended to without a mask."""
        b = x.shape[0]
        q = self.q(x).view(b, 1, self.heads, self.dim).transpose(1, 2)
        k, v = self.kv(x).view(b, 1, 2, self.kv_heads, self.dim).unbind(2)
        slot = pos if mask is not None else pos % self.k_cache.shape[2]
        self.k_cache.index_copy_(2, slot, k.transpose(1, 2))
        self.v_cache.index_copy_(2, slot, v.transpose(1, 2))
        a = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, attn_mask=mask,
                                           enable_gqa=True)
        return self.out(a.transpose(1, 2).reshape(b, 1, -1))


class Mlp(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.gate = torch.nn.Linear(width, 3 * width, bias=False)
        self.up = torch.nn.Linear(width, 3 * width, bias=False)
        self.down = torch.nn.Linear(3 * width, width, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Layer(torch.nn.Module):
    def __init__(self, width, heads, kv_heads, max_len, batch):
        super().__init__()
        self.norm1 = RmsNorm(width)
        self.attn = Attention(width, heads, kv_heads, max_len, batch)
        self.norm2 = RmsNorm(width)
        self.mlp = Mlp(width)

    def forward(self, x, pos, mask):
        x = x + self.attn(self.norm1(x), pos, mask)
        return x + self.mlp(self.norm2(x))


class Decoder(torch.nn.Module):
    def __init__(self, args):
        super().__init__()
        self.embed = torch.nn.Embedding(args.vocab, args.width)
        self.layers = torch.nn.ModuleList(
            Layer(args.width, args.heads, args.kv_heads, args.max_len, args.batch)
            for _ in range(args.layers))
        self.norm = RmsNorm(args.width)
        self.head = torch.nn.Linear(args.width, args.vocab, bias=False)
        self.register_buffer("positions", torch.arange(args.max_len), persistent=False)

    def step(self, x, pos, tokens, window=False):
        """One decode step on static tensors: x [B, 1, W] (updated to the next token's
        embedding), pos [1] (advanced by one), tokens [B, max_len] (the token written at pos).
        window: attend to the whole cache, a ring of the last max_len tokens, without a mask."""
        mask = None if window else (self.positions <= pos).view(1, 1, 1, -1)
        h = x
        for layer in self.layers:
            h = layer(h, pos, mask)
        nxt = self.head(self.norm(h)).argmax(-1)  # [B, 1]
        tokens.index_copy_(1, pos % tokens.shape[1], nxt)
        x.copy_(self.embed(nxt))
        pos.add_(1)


def digest(hash_, tensor):
    hash_.update(tensor.detach().float().cpu().numpy().tobytes())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=16, help="decode steps (graph replays)")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--width", type=int, default=2048)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--kv-heads", type=int, default=4)
    parser.add_argument("--prompt", type=int, default=3072, help="tokens already in the cache")
    parser.add_argument("--max-len", type=int, default=4096)
    parser.add_argument("--vocab", type=int, default=32000)
    parser.add_argument("--no-graph", action="store_true", help="run the steps eagerly")
    parser.add_argument("--attention", choices=("mask", "window"), default="mask",
                        help="mask: the cache up to the new token, masked (SDPA's math path "
                        "with GQA); window: the whole cache, a ring of the last max-len tokens, "
                        "unmasked (SDPA's fused kernels)")
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    device = torch.device("cuda")
    with torch.no_grad():
        model = Decoder(args).to(device).half()
        nvtx_hooks(model)
        window = args.attention == "window"
        # The prompt's keys and values, as a prefill would have left them (a window: full).
        for layer in model.layers:
            for cache in (layer.attn.k_cache, layer.attn.v_cache):
                cache[:, :, : args.max_len if window else args.prompt].normal_()
        tokens = torch.zeros(args.batch, args.max_len, dtype=torch.long, device=device)
        x = model.embed(torch.randint(0, args.vocab, (args.batch, 1), device=device))
        pos = torch.tensor([args.prompt], device=device)
        # Warm-up on a side stream (PyTorch's rule for capture), then one capture of one step.
        # The warm-up step is undone: the cache slot it wrote is overwritten, pos restored.
        x0 = x.clone()
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            model.step(x, pos, tokens, window)
        torch.cuda.current_stream().wait_stream(stream)
        x.copy_(x0)
        pos.fill_(args.prompt)
        graph = torch.cuda.CUDAGraph()
        if not args.no_graph:
            with torch.cuda.graph(graph):
                model.step(x, pos, tokens, window)
            # The capture ran nothing: the state is still the warm-up's undone state.
        torch.cuda.nvtx.range_push("decode")
        for _ in range(args.steps):
            if args.no_graph:
                model.step(x, pos, tokens, window)
            else:
                graph.replay()
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        hash_ = hashlib.sha256()
        digest(hash_, tokens[:, args.prompt: args.prompt + args.steps])
        for layer in model.layers:
            digest(hash_, layer.attn.k_cache.sum(dim=(0, 1, 3)))
    print(f"decode_loop: checksum {hash_.hexdigest()[:16]} "
          f"tokens {tokens[0, args.prompt: args.prompt + 4].tolist()}")


if __name__ == "__main__":
    main()
