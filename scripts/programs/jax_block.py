#!/usr/bin/env python3
"""A JAX program to profile, shaped like real work: a pre-norm transformer block (LayerNorm,
multi-head self-attention with a causal mask, a GELU MLP, residuals) in BF16, jitted, a forward
and a training step (value_and_grad, SGD) for a few steps, as a user starts it: cold, XLA
compiling and autotuning its GEMMs on the first call (the autotuner's own kernels run then, among
them a DelayKernel that spins until the host releases it). Deterministic: prints one checksum
line of the losses and the final parameters, which profiling must leave bit-identical.

    python3 scripts/programs/jax_block.py [--steps 4] [--batch 8] [--seq 1024] [--width 1024]

Exits 2 with one line when JAX has no GPU backend.
"""
import argparse
import hashlib
import sys

import numpy as np

try:
    import jax
    import jax.numpy as jnp
except ImportError as error:
    print(f"jax_block: JAX is not installed ({error})", file=sys.stderr)
    sys.exit(2)


def init(key, width, heads):
    k = jax.random.split(key, 4)
    scale = 1.0 / np.sqrt(width)
    return {
        "qkv": (jax.random.normal(k[0], (width, 3 * width)) * scale).astype(jnp.bfloat16),
        "out": (jax.random.normal(k[1], (width, width)) * scale).astype(jnp.bfloat16),
        "up": (jax.random.normal(k[2], (width, 4 * width)) * scale).astype(jnp.bfloat16),
        "down": (jax.random.normal(k[3], (4 * width, width)) * scale / 2).astype(jnp.bfloat16),
        "norm1": jnp.ones((width,), jnp.float32),
        "norm2": jnp.ones((width,), jnp.float32),
    }


def layer_norm(x, gain):
    x32 = x.astype(jnp.float32)
    mean = x32.mean(-1, keepdims=True)
    var = ((x32 - mean) ** 2).mean(-1, keepdims=True)
    return ((x32 - mean) * jax.lax.rsqrt(var + 1e-5) * gain).astype(x.dtype)


def block(params, x, heads):
    batch, seq, width = x.shape
    h = layer_norm(x, params["norm1"])
    q, k, v = jnp.split(h @ params["qkv"], 3, axis=-1)
    split = lambda t: t.reshape(batch, seq, heads, width // heads).transpose(0, 2, 1, 3)
    q, k, v = split(q), split(k), split(v)
    scores = (q @ k.transpose(0, 1, 3, 2)).astype(jnp.float32) / np.sqrt(width // heads)
    causal = jnp.tril(jnp.ones((seq, seq), bool))
    scores = jnp.where(causal, scores, -1e30)
    attn = jax.nn.softmax(scores, axis=-1).astype(x.dtype) @ v
    x = x + attn.transpose(0, 2, 1, 3).reshape(batch, seq, width) @ params["out"]
    h = layer_norm(x, params["norm2"])
    return x + jax.nn.gelu(h @ params["up"]) @ params["down"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--heads", type=int, default=16)
    args = parser.parse_args()
    if not any(d.platform == "gpu" for d in jax.devices()):
        print("jax_block: JAX sees no GPU", file=sys.stderr)
        sys.exit(2)
    key = jax.random.PRNGKey(0)
    params = init(key, args.width, args.heads)
    x = jax.random.normal(jax.random.PRNGKey(1), (args.batch, args.seq, args.width)).astype(
        jnp.bfloat16)
    target = jax.random.normal(jax.random.PRNGKey(2), x.shape).astype(jnp.bfloat16)

    def loss_fn(p, x, t):
        y = block(p, x, args.heads).astype(jnp.float32)
        return jnp.mean((y - t.astype(jnp.float32)) ** 2)

    @jax.jit
    def step(p, x, t):
        loss, grads = jax.value_and_grad(loss_fn)(p, x, t)
        return loss, jax.tree_util.tree_map(lambda w, g: (w - 1e-2 * g).astype(w.dtype), p, grads)

    forward = jax.jit(lambda p, x: block(p, x, args.heads))
    digest = hashlib.sha256()
    digest.update(np.asarray(forward(params, x), np.float32).tobytes())
    for _ in range(args.steps):
        loss, params = step(params, x, target)
        digest.update(np.asarray(loss, np.float32).tobytes())
    for name in sorted(params):
        digest.update(np.asarray(params[name], np.float32).tobytes())
    print(f"jax_block: checksum {digest.hexdigest()[:16]} loss {float(loss):.6f}")


if __name__ == "__main__":
    main()
