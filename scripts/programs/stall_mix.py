#!/usr/bin/env python3
"""A PyTorch program for `profile --stalls` against ncu's warp-state sampling
(scripts/stalls_check.sh, stage `profile`): three kernels of different kinds, each launched
--iterations times in the same order:

  - a cuBLAS GEMM: BF16 4096 x 4096 x 4096 (torch.matmul);
  - cuDNN's SDPA backward: scaled_dot_product_attention with the cuDNN backend, B4 H16 N2048
    d128 causal, BF16, then its backward;
  - an element-wise kernel: torch.mul of two 2^26-element FP32 tensors (PyTorch's
    vectorized_elementwise_kernel).

Prints one line: a checksum of the GEMM's and the element-wise kernel's outputs (every 4099th
element, bit-exact from run to run) and the norms of the SDPA output and gradients to 4 digits
(cuDNN's backward may add in another order from run to run), which profiling must leave
unchanged:

    python3 scripts/programs/stall_mix.py [--iterations 3]
"""
import argparse
import hashlib

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=3)
    args = parser.parse_args()
    gen = torch.Generator(device="cuda").manual_seed(0)

    # uniform_ (a distribution kernel), so that the only vectorized_elementwise_kernel with
    # MulFunctor the program launches is the loop's torch.mul.
    def rand(*shape, dtype=torch.bfloat16):
        return torch.empty(shape, device="cuda", dtype=dtype).uniform_(-1, 1, generator=gen)

    a, b = rand(4096, 4096), rand(4096, 4096)
    q, k, v = (rand(4, 16, 2048, 128).requires_grad_() for _ in range(3))
    grad = rand(4, 16, 2048, 128)
    x, y = rand(1 << 26, dtype=torch.float32), rand(1 << 26, dtype=torch.float32)
    digest = hashlib.sha256()
    norms = []
    for _ in range(args.iterations):
        c = torch.matmul(a, b)
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        dq, dk, dv = torch.autograd.grad(out, (q, k, v), grad)
        z = torch.mul(x, y)
        torch.cuda.synchronize()
        for t in (c, z):
            digest.update(t.flatten()[::4099].float().cpu().numpy().tobytes())  # a sample
        norms = [t.float().norm().item() for t in (out, dq, dk, dv)]
    print(f"stall_mix: checksum {digest.hexdigest()[:16]} sdpa norms "
          + " ".join(f"{n:.4g}" for n in norms))


if __name__ == "__main__":
    main()
