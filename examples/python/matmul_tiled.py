"""examples/matmul_tiled.json as a Python kernel: c = a x b for n x n f32 matrices, with 8x8 tiles
staged in workgroup memory. ``dims: u32`` is a one-element uniform, passed as a Python int."""

import vyre
from vyre import f32, u32


@vyre.kernel(workgroup=(8, 8))
def matmul_tiled(dims: u32, a: vyre.In[f32], b: vyre.In[f32], c: vyre.Out[f32]):
    ta = vyre.shared(f32, 64)
    tb = vyre.shared(f32, 64)
    row = vyre.gid.y
    col = vyre.gid.x
    lr = vyre.lid.y
    lc = vyre.lid.x
    n = dims
    acc = 0.0
    for t in range((n + 7) // 8):
        ac = t * 8 + lc
        av = 0.0
        if row < n and ac < n:
            av = a[row * n + ac]
        ta[lr * 8 + lc] = av
        br = t * 8 + lr
        bv = 0.0
        if br < n and col < n:
            bv = b[br * n + col]
        tb[lr * 8 + lc] = bv
        vyre.barrier()
        for k in range(8):
            acc = vyre.fma(ta[lr * 8 + k], tb[k * 8 + lc], acc)
        vyre.barrier()
    if row < n and col < n:
        c[row * n + col] = acc
