#!/usr/bin/env python3
"""Static SASS statistics of a cubin, for machines without nvdisasm/cuobjdump.

Usage: nvcc -cubin -arch=sm_90 ... -o k.cubin file.cu
       bench/gpu/sass_stats.py k.cubin [substring of the demangled kernel name]

Per kernel: the instruction count (.text section bytes / 16: sm_70+ instructions
are 128-bit) and a histogram of the opcode field (low 12 bits; the top bits
pick register / immediate / constant operands). The opcode names are the
commonly documented sm_7x-9x encodings (IMAD 0x224, IMAD.WIDE 0x225, IMAD.HI
0x227, IADD3 0x210, ...); unknown ones print as hex. Good for comparing two
versions of a kernel (e.g. CUZK_FIELD_MUL=0 vs 1), not a disassembler. The
FMA-heavy cycle count is static (no loop trip counts): compare like with like.
"""
import collections
import struct
import subprocess
import sys

NAMES = {0x02: 'MOV', 0x07: 'SEL', 0x0c: 'ISETP', 0x10: 'IADD3', 0x11: 'LEA', 0x12: 'LOP3', 0x19: 'SHF',
         0x24: 'IMAD', 0x25: 'IMAD.WIDE', 0x27: 'IMAD.HI'}
OTHER = {0x381: 'LDG', 0x386: 'STG', 0x947: 'BRA', 0x94d: 'EXIT', 0x918: 'NOP', 0x919: 'S2R', 0xab9: 'ULDC'}


def opcode_name(word):
    op = word & 0xfff
    if op in OTHER:
        return OTHER[op]
    # ALU opcodes 0x2xx (register), 0x8xx (immediate), 0xaxx / 0xcxx (constant bank).
    if (op >> 8) in (0x2, 0x8, 0xa, 0xc) and (op & 0xff) in NAMES:
        return NAMES[op & 0xff]
    return hex(op)


def main():
    data = open(sys.argv[1], 'rb').read()
    pattern = sys.argv[2] if len(sys.argv) > 2 else ''
    shoff, = struct.unpack_from('<Q', data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3a)
    sections = [struct.unpack_from('<IIQQQQ', data, shoff + i * shentsize) for i in range(shnum)]
    strtab = sections[shstrndx][4]
    for name_off, _, _, _, offset, size in sections:
        name = data[strtab + name_off:data.index(b'\0', strtab + name_off)].decode()
        if not name.startswith('.text.'):
            continue
        kernel = subprocess.run(['c++filt'], input=name[6:], capture_output=True, text=True).stdout.strip()
        if pattern not in kernel:
            continue
        hist = collections.Counter(opcode_name(struct.unpack_from('<Q', data, k)[0])
                                   for k in range(offset, offset + size, 16))
        imad = sum(v for k, v in hist.items() if k.startswith('IMAD'))
        # FMA-heavy pipe cycles per warp on sm_90 (calibrated with ncu; bench/gpu/NOTES.md,
        # "The H200's multiply pipe"):
        # IMAD.WIDE and IMAD.HI hold the pipe 4 cycles, IMAD (.X, .MOV, ...) 2.
        fma_cycles = 4 * (hist['IMAD.WIDE'] + hist['IMAD.HI']) + 2 * hist['IMAD']
        print(f'{size // 16:7d} instructions, IMAD-class {imad:6d}, FMA-heavy cycles {fma_cycles:7d}  {kernel[:150]}')
        print('        ' + ', '.join(f'{k} {v}' for k, v in hist.most_common(10)))


if __name__ == '__main__':
    main()
