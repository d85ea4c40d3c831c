"""examples/reduction.json as a Python kernel: sums[w] = the sum of workgroup w's 64 values,
by a tree reduction in workgroup memory."""

import vyre
from vyre import u32


@vyre.kernel(workgroup=64)
def reduction(values: vyre.In[u32], sums: vyre.Out[u32]):
    scratch = vyre.shared(u32, 64)
    i = vyre.gid.x
    l = vyre.lid.x
    v = 0
    if i < len(values):
        v = values[i]
    scratch[l] = v
    vyre.barrier()
    stride = 32
    while stride > 0:
        if l < stride:
            scratch[l] += scratch[l + stride]
        vyre.barrier()
        stride >>= 1
    if l == 0:
        sums[vyre.wgid.x] = scratch[0]
