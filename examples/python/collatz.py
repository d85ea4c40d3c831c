"""examples/collatz.json as a Python kernel: steps[i] = Collatz steps from n[i] down to 1."""

import vyre
from vyre import u32


@vyre.kernel(workgroup=64)
def collatz(n: vyre.In[u32], steps: vyre.Out[u32]):
    i = vyre.gid.x
    if i >= len(steps):
        return
    v = n[i]
    count = 0
    while v > 1:
        if v % 2 == 0:
            v = v // 2
        else:
            v = v * 3 + 1
        count += 1
    steps[i] = count
