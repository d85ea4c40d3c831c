"""examples/histogram.json as a Python kernel: hist[b] counts the values v with v % 16 == b,
first in workgroup memory, then into the global histogram (atomics both times)."""

import vyre
from vyre import u32


@vyre.kernel(workgroup=64)
def histogram(values: vyre.In[u32], hist: vyre.Out[u32, 16]):
    local = vyre.shared(u32, 16)
    i = vyre.gid.x
    l = vyre.lid.flat
    if i < len(values):
        vyre.atomic_add(local, values[i] % 16, 1)
    vyre.barrier()
    if l < 16:
        vyre.atomic_add(hist, l, vyre.atomic_load(local, l))
