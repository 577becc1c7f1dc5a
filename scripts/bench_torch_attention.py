"""PyTorch baselines for the kernel benchmark (run on the device machine).

Times torch's SDPA flash backend (forward, and backward through autograd) and the unfused
matmul-softmax-matmul forward at the same shapes as gpu_kernel_bench, with CUDA events,
an L2 flush before each repetition and the median of the repetitions.
"""
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

SEQ = 16384
REPS = 10
WARMUP = 2


def median_ms(fn, flush):
    times = []
    for i in range(WARMUP + REPS):
        flush.bitwise_not_()
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        if i >= WARMUP:
            times.append(start.elapsed_time(stop))
    times.sort()
    mid = len(times) // 2
    return times[mid] if len(times) % 2 else 0.5 * (times[mid - 1] + times[mid])


def unfused(q, k, v, causal, scale):
    s = torch.matmul(q, k.transpose(-1, -2))
    s.mul_(scale)
    if causal:
        n = q.shape[-2]
        mask = torch.ones(n, n, dtype=torch.bool, device=q.device).triu_(1)
        s.masked_fill_(mask, float("-inf"))
    p = torch.softmax(s, dim=-1)
    del s
    return torch.matmul(p, v)


def main():
    torch.manual_seed(0)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    rows = []
    for batch, heads, dim in [(1, 8, 64), (4, 16, 128)]:
        for causal in [False, True]:
            shape = (batch, heads, SEQ, dim)
            q = torch.rand(shape, device="cuda", dtype=torch.float16) * 2 - 1
            k = torch.rand(shape, device="cuda", dtype=torch.float16) * 2 - 1
            v = torch.rand(shape, device="cuda", dtype=torch.float16) * 2 - 1
            d_o = torch.rand(shape, device="cuda", dtype=torch.float16) * 2 - 1
            flops = 4.0 * batch * heads * SEQ * SEQ * dim * (0.5 if causal else 1.0)
            label = f"B{batch} H{heads} N{SEQ} d{dim} {'causal' if causal else 'full'}"
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                with torch.inference_mode():
                    ms = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), flush)
                rows.append(("torch-sdpa-flash", label, "fwd", ms, flops / ms / 1e9))
                qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
                out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
                ms = median_ms(lambda: torch.autograd.grad(out, (qg, kg, vg), d_o, retain_graph=True), flush)
                rows.append(("torch-sdpa-flash", label, "bwd", ms, 2.5 * flops / ms / 1e9))
                del out, qg, kg, vg
            with torch.inference_mode():
                ms = median_ms(lambda: unfused(q, k, v, causal, dim ** -0.5), flush)
            rows.append(("torch-unfused", label, "fwd", ms, flops / ms / 1e9))
            for r in rows[-3:]:
                print(f"{r[0]:<17} {r[1]:<28} {r[2]} {r[3]:10.3f} ms {r[4]:8.1f} TFLOP/s", flush=True)
            del q, k, v, d_o
            torch.cuda.empty_cache()
    print("\n| kernel | shape | pass | median ms | TFLOP/s |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.3f} | {r[4]:.1f} |")


if __name__ == "__main__":
    main()
