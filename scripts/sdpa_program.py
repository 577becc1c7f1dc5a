#!/usr/bin/env python3
"""A PyTorch program to profile: scaled_dot_product_attention with the flash and cuDNN
backends, and the unfused matmul-softmax-matmul path, one forward each over the seed sweep
(B1 H8 d64, N 1024..16384, causal and not). Each call runs under an NVTX range named
"<impl> B1 H8 N<n> d64 <causal|full> fwd", so that `cuflash-roofline profile` gives its
kernels that workload. Used by scripts/profile_acceptance.sh, under our profiler and ncu.

    python3 scripts/sdpa_program.py [--seq 1024,4096,8192,16384]
"""
import argparse
import math

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def unfused(q, k, v, causal):
    s = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        n = q.shape[-2]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1),
                          float("-inf"))
    return torch.matmul(torch.softmax(s, dim=-1), v)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seq", default="1024,4096,8192,16384")
    args = parser.parse_args()
    b, h, d = 1, 8, 64
    gen = torch.Generator(device="cuda").manual_seed(0)
    for n in (int(x) for x in args.seq.split(",")):
        for causal in (True, False):
            q, k, v = (torch.rand((b, h, n, d), device="cuda", dtype=torch.float16,
                                  generator=gen) * 2 - 1 for _ in range(3))
            label = f"B{b} H{h} N{n} d{d} {'causal' if causal else 'full'} fwd"
            outputs = {}
            for impl in ("flash", "cudnn", "unfused"):
                torch.cuda.nvtx.range_push(f"{impl} {label}")
                with torch.no_grad():
                    if impl == "unfused":
                        outputs[impl] = unfused(q, k, v, causal)
                    else:
                        backend = (SDPBackend.FLASH_ATTENTION if impl == "flash"
                                   else SDPBackend.CUDNN_ATTENTION)
                        with sdpa_kernel(backend):
                            outputs[impl] = F.scaled_dot_product_attention(q, k, v,
                                                                           is_causal=causal)
                torch.cuda.synchronize()
                torch.cuda.nvtx.range_pop()
            # The three implementations agree: profiling must not change results.
            for impl in ("cudnn", "unfused"):
                err = (outputs[impl].float() - outputs["flash"].float()).abs().max().item()
                if not err < 2e-2:
                    raise SystemExit(f"{impl} differs from flash by {err} at {label}")
    print("sdpa_program: ok")


if __name__ == "__main__":
    main()
