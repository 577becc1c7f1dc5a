"""NVTX ranges around a PyTorch model's modules, for the programs of scripts/programs/: every
module runs inside a range of its qualified name ("layers.0.attn"), so `profile` can attribute
each kernel, and each node a CUDA graph captured, to the module it came from."""
import torch


def nvtx_hooks(model):
    """Every module of `model` runs inside an NVTX range of its qualified name."""
    def push(name):
        def hook(module, args):
            torch.cuda.nvtx.range_push(name)  # a hook that returns a value replaces the input
        return hook

    def pop(module, args, output):
        torch.cuda.nvtx.range_pop()

    for name, module in model.named_modules():
        if name:
            module.register_forward_pre_hook(push(name))
            module.register_forward_hook(pop)
