"""examples/prefix_sum.json as a Python kernel: out[i] = values[0] + ... + values[i], a
Hillis-Steele scan of each 256-element chunk with a carry (one workgroup)."""

import vyre
from vyre import u32


@vyre.kernel(workgroup=256)
def prefix_sum(values: vyre.In[u32], out: vyre.Out[u32]):
    tile = vyre.shared(u32, 256)
    l = vyre.lid.x
    n = len(values)
    base = 0
    carry = 0
    while base < n:
        idx = base + l
        v = 0
        if idx < n:
            v = values[idx]
        tile[l] = v
        vyre.barrier()
        offset = 1
        while offset < 256:
            t = 0
            if l >= offset:
                t = tile[l - offset]
            vyre.barrier()
            tile[l] += t
            vyre.barrier()
            offset <<= 1
        if idx < n:
            out[idx] = tile[l] + carry
        carry += tile[255]
        vyre.barrier()
        base += 256
