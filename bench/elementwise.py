"""Elementwise kernel closures vs the bare NumPy ufunc, f32[256,1024] (and f64), under the
evaluator's conditions (errstate ignore + denormal flushing).

    python3 bench/elementwise.py
"""
import sys, timeit
import numpy as np, ml_dtypes
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import hlo_interp
from hlo_interp.ops.registry import KERNELS
from hlo_interp.ops import numerics as nx
import hlo_interp.evaluator
from hlo_interp.ops import load_all; load_all()

class Ctx:
    def __init__(self, m): self.m = m
    def operand_shapes(self, ins):
        c = self.m.entry
        byname = {i.name: i for i in c.instructions}
        return [byname[o].shape if not hasattr(o, 'shape') else o.shape for o in ins.operands]

def build(body, ty):
    m = hlo_interp.parse("HloModule m\nENTRY e {\n" + body + "\n}\n")
    ins = m.entry.root
    return KERNELS[ins.opcode](ins, Ctx(m))

def t(fn, *a, n=None):
    n = n or 30
    best = min(timeit.repeat(lambda: fn(*a), number=n, repeat=7)) / n
    return best * 1e6

rng = np.random.default_rng(0)
res = []
for ty, dt in (("f32", np.float32), ("f64", np.float64)):
    S = "[256,1024]"
    a = rng.standard_normal((256, 1024)).astype(dt); b = rng.standard_normal((256, 1024)).astype(dt)
    p = a > b
    hdr = f"  a = {ty}{S} parameter(0)\n  b = {ty}{S} parameter(1)\n"
    cases = [
        ("add", hdr + f"  ROOT r = {ty}{S} add(a, b)", (a, b), lambda: np.add(a, b)),
        ("subtract", hdr + f"  ROOT r = {ty}{S} subtract(a, b)", (a, b), lambda: np.subtract(a, b)),
        ("multiply", hdr + f"  ROOT r = {ty}{S} multiply(a, b)", (a, b), lambda: np.multiply(a, b)),
        ("divide", hdr + f"  ROOT r = {ty}{S} divide(a, b)", (a, b), lambda: np.divide(a, b)),
        ("maximum", hdr + f"  ROOT r = {ty}{S} maximum(a, b)", (a, b), lambda: np.maximum(a, b)),
        ("minimum", hdr + f"  ROOT r = {ty}{S} minimum(a, b)", (a, b), lambda: np.minimum(a, b)),
        ("exp", f"  a = {ty}{S} parameter(0)\n  ROOT r = {ty}{S} exponential(a)", (a,), lambda: np.exp(a)),
        ("tanh", f"  a = {ty}{S} parameter(0)\n  ROOT r = {ty}{S} tanh(a)", (a,), lambda: np.tanh(a)),
        ("compare GT", hdr + f"  ROOT r = pred{S} compare(a, b), direction=GT", (a, b), lambda: np.greater(a, b)),
        ("select", f"  p = pred{S} parameter(0)\n" + hdr.replace("(0)", "(1)").replace("(1)\n", "(2)\n", 1).replace("b = " + ty + S + " parameter(1)", "b = " + ty + S + " parameter(2)") + f"  ROOT r = {ty}{S} select(p, a, b)", (p, a, b), lambda: np.where(p, a, b)),
    ]
    if ty == "f32":
        bb = a.astype(ml_dtypes.bfloat16)
        cases += [
            ("convert f32->bf16", f"  a = f32{S} parameter(0)\n  ROOT r = bf16{S} convert(a)", (a,), lambda: a.astype(ml_dtypes.bfloat16)),
            ("convert bf16->f32", f"  a = bf16{S} parameter(0)\n  ROOT r = f32{S} convert(a)", (bb,), lambda: bb.astype(np.float32)),
        ]
    for name, body, args, ref in cases:
        k = build(body, ty)
        with np.errstate(all="ignore"), nx.flush_denormals():
            tk = t(k, *args); tr = t(ref)
        res.append((ty, name, tk, tr))
        print(f"{ty:4} {name:18} kernel {tk:8.1f} us   numpy {tr:8.1f} us   ratio {tk/tr:5.2f}", flush=True)
