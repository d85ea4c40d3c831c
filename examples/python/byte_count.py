"""examples/byte_count.json as a Python kernel: counts[b] is the number of bytes equal to b in a
uint8 array, taken as it is (format version 4). Each invocation counts 16 consecutive bytes into
its workgroup's 256 bins, which are then added to the global counts (atomics both times)."""

import vyre
from vyre import u8, u32


@vyre.kernel(workgroup=256)
def byte_count(data: vyre.In[u8], counts: vyre.Out[u32, 256]):
    local = vyre.shared(u32, 256)
    start = vyre.gid.x * 16
    for k in range(16):
        if start + k < len(data):
            vyre.atomic_add(local, data[start + k], 1)
    vyre.barrier()
    vyre.atomic_add(counts, vyre.lid.x, vyre.atomic_load(local, vyre.lid.x))
