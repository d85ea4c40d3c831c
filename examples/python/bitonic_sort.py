"""examples/bitonic_sort.json as a Python kernel: sorts 256 i32 values ascending with a bitonic
network in workgroup memory (one workgroup of 128 invocations, two elements each)."""

import vyre
from vyre import i32


@vyre.kernel(workgroup=128)
def bitonic_sort(data: vyre.InOut[i32, 256]):
    tile = vyre.shared(i32, 256)
    l = vyre.lid.x
    tile[l] = data[l]
    tile[l + 128] = data[l + 128]
    vyre.barrier()
    k = 2
    while k <= 256:
        j = k >> 1
        while j > 0:
            i = 2 * j * (l // j) + l % j
            p = i + j
            a = tile[i]
            b = tile[p]
            ascending = (i & k) == 0
            if (a > b) == ascending:
                tile[i] = b
                tile[p] = a
            vyre.barrier()
            j = j >> 1
        k = k << 1
    data[l] = tile[l]
    data[l + 128] = tile[l + 128]
