#!/usr/bin/env python3
"""Compares the machine code of two cubins (ELF, as `nvcc -cubin` writes them): every `.text.*`
section (one per kernel) byte for byte. Line tables, symbol names' order and other sections may
differ; the code the GPU runs may not.

    python3 scripts/kernel_text.py BEFORE.cubin AFTER.cubin

Prints one line (kernels, bytes, identical or not) and each kernel whose code differs.
Exit: 0 identical, 1 different, 2 usage or a file that is no 64-bit ELF.
"""
import re
import struct
import sys

# An anonymous namespace's mangled name holds a hash of the file's path
# (_GLOBAL__N__61ea163f_11_flash_v1_cu_82b708f4): the same kernel compiled in two checkouts has
# two names. Compared without it.
ANONYMOUS = re.compile(r"_GLOBAL__N__[0-9a-f]+_(\d+)([A-Za-z0-9_]+?)_[0-9a-f]{8}")


def text_sections(path):
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        print(f"kernel_text: {path}: not a 64-bit ELF (a cubin from nvcc -cubin?)", file=sys.stderr)
        sys.exit(2)
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    entsize, count, names_index = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * entsize) for i in range(count)]
    names_at = headers[names_index][4]

    def name(offset):
        end = data.index(b"\0", names_at + offset)
        return data[names_at + offset:end].decode()

    return {ANONYMOUS.sub(r"_GLOBAL__N__\1\2", name(h[0])): data[h[4]:h[4] + h[5]]
            for h in headers if name(h[0]).startswith(".text")}


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    before, after = text_sections(sys.argv[1]), text_sections(sys.argv[2])
    same = before == after
    size = sum(len(v) for v in after.values())
    print(f"{sys.argv[2].rsplit('/', 1)[-1]}: {len(after)} kernels, {size} bytes of code: "
          + ("identical" if same else "DIFFERENT"))
    for kernel in sorted(set(before) | set(after)):
        if before.get(kernel) != after.get(kernel):
            print(f"  differs: {kernel}")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
