"""examples/softmax.json as a Python kernel: y = softmax of each row of x (one workgroup a row;
the row's max and sum by tree reductions in workgroup memory). The locals keep the JSON
program's names (``len`` and ``sum`` included), so both have one digest."""

import math

import vyre
from vyre import f32, u32


@vyre.kernel(workgroup=64)
def softmax(dims: vyre.Uniform[u32, 1], x: vyre.In[f32], y: vyre.Out[f32]):
    red = vyre.shared(f32, 64)
    l = vyre.lid.x
    len = dims[0]  # noqa: A001  a local named like the builtin, as in the JSON program
    base = vyre.wgid.x * len
    chunks = (len + 63) // 64

    m = -math.inf
    for k in range(chunks):
        j = k * 64 + l
        if j < len:
            m = max(m, x[base + j])
    red[l] = m
    vyre.barrier()
    s1 = 32
    while s1 > 0:
        if l < s1:
            red[l] = max(red[l], red[l + s1])
        vyre.barrier()
        s1 = s1 >> 1
    row_max = red[0]
    vyre.barrier()

    sum = 0.0  # noqa: A001
    for k in range(chunks):
        j = k * 64 + l
        if j < len:
            sum = sum + vyre.exp(x[base + j] - row_max)
    red[l] = sum
    vyre.barrier()
    s2 = 32
    while s2 > 0:
        if l < s2:
            red[l] = red[l] + red[l + s2]
        vyre.barrier()
        s2 = s2 >> 1
    total = red[0]

    for k in range(chunks):
        j = k * 64 + l
        if j < len:
            y[base + j] = vyre.exp(x[base + j] - row_max) / total
