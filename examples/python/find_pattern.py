"""examples/find_pattern.json as a Python kernel: every occurrence of a 4-byte pattern in a uint8
array (format version 4). Each invocation tries 16 consecutive start positions; a match takes the
next slot of `where` with an atomic counter, so `count` is the number of occurrences and
`where[:count]` holds their positions in no particular order (sort them). A `where` shorter than
the count keeps the first matches to claim a slot; the count is still exact."""

import vyre
from vyre import u8, u32


@vyre.kernel(workgroup=256)
def find_pattern(data: vyre.In[u8], pattern: vyre.In[u8, 4], count: vyre.Out[u32, 1], where: vyre.Out[u32]):
    start = vyre.gid.x * 16
    for k in range(16):
        i = start + k
        if i + 3 < len(data):
            if data[i] == pattern[0] and data[i + 1] == pattern[1] and data[i + 2] == pattern[2] and data[i + 3] == pattern[3]:
                slot = vyre.atomic_add(count, 0, 1)
                if slot < len(where):
                    where[slot] = i
