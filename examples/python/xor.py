"""examples/xor.json as a Python kernel: out[i] = a[i] ^ b[i]."""

import vyre
from vyre import u32


@vyre.kernel(workgroup=64)
def xor(a: vyre.In[u32], b: vyre.In[u32], out: vyre.Out[u32]):
    i = vyre.gid.x
    if i < len(out):
        out[i] = a[i] ^ b[i]
