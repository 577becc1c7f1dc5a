#!/usr/bin/env python3
"""A PyTorch program to profile, shaped like real work: a small decoder-only transformer
(4 layers: LayerNorm, causal SDPA attention, MLP with GELU) in BF16 autocast, trained for a few
steps with fused AdamW, cold from the start. Many kernels of a few microseconds (norms,
element-wise ops, the optimizer) beside large GEMMs and attention. Prints one checksum line of
the losses and the final parameters (deterministic algorithms on), which profiling must leave
bit-identical:

    python3 scripts/programs/train_step.py [--steps 2] [--layers 4] [--sms N]

--sms N runs the whole program in a CUDA green context of N SMs through PyTorch's
torch.cuda.green_contexts (beta; PyTorch 2.10 and later, CUDA 12.8+): GreenContext.create, then
set_context, which makes the green context current and its default stream PyTorch's current
stream, so that every kernel after it runs on those SMs. The driver rounds N up to its
granularity (a multiple of 8 on Hopper), as `cuflash-roofline run --sms` does; the line
"train_step: green context ..." says what was asked. Exits 2 where PyTorch has no green
contexts.
"""
import argparse
import hashlib
import os
import sys

# Deterministic kernels (cuBLAS's workspace, attention's and embedding's backward), so that two
# runs print the same checksum and profiling can be held to it.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class Layer(torch.nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(width)
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.proj = torch.nn.Linear(width, width)
        self.norm2 = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)

    def forward(self, x):
        b, n, w = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, n, 3, self.heads, w // self.heads).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                           v.transpose(1, 2), is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, n, w))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class Model(torch.nn.Module):
    def __init__(self, vocab, width, heads, layers):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        self.layers = torch.nn.ModuleList(Layer(width, heads) for _ in range(layers))
        self.norm = torch.nn.LayerNorm(width)
        self.head = torch.nn.Linear(width, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x))


def on_green_context(sms):
    """Makes a green context of `sms` SMs current (main pops it when the work is done)."""
    try:
        from torch.cuda import green_contexts
    except ImportError:
        green_contexts = None
    if green_contexts is None or not getattr(green_contexts, "SUPPORTED", True):
        print(f"train_step: --sms: PyTorch {torch.__version__} has no green contexts",
              file=sys.stderr)
        sys.exit(2)
    torch.zeros(1, device="cuda")  # the primary context first, as create() wants it
    context = green_contexts.GreenContext.create(num_sms=sms, device_id=0)
    context.set_context()
    print(f"train_step: green context of {sms} SMs asked (torch {torch.__version__})", flush=True)
    return context


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--vocab", type=int, default=8192)
    parser.add_argument("--sms", type=int, default=0,
                        help="run in a CUDA green context of this many SMs (0: the whole GPU)")
    args = parser.parse_args()
    # Kept to the end: the green context is destroyed with its Python object.
    green = on_green_context(args.sms) if args.sms else None
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    device = torch.device("cuda")
    model = Model(args.vocab, args.width, args.heads, args.layers).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    tokens = torch.randint(0, args.vocab, (args.batch, args.seq + 1), device=device)
    hash_ = hashlib.sha256()
    for _ in range(args.steps):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.float().view(-1, args.vocab), tokens[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()
        hash_.update(loss.detach().cpu().numpy().tobytes())
    torch.cuda.synchronize()
    for p in model.parameters():
        hash_.update(p.detach().float().cpu().numpy().tobytes())
    print(f"train_step: checksum {hash_.hexdigest()[:16]}")
    if green is not None:
        green.pop_context()  # the context before it current again, before teardown


if __name__ == "__main__":
    main()
