"""XLA:CPU's excess precision for bf16: a bf16 result that is read as f32 is not rounded to bf16.

XLA:CPU computes bf16 arithmetic in f32 (FloatNormalization with the CPU's float support: every bf16
operation but converts and calls becomes an f32 operation followed by a convert back to bf16).  With
`xla_allow_excess_precision` (on by default) the pass hands an f32 `convert` of such a result the f32
value itself, before the rounding (FloatNormalizationVisitor::ChangeOutputTypeThenInsertConvertBack).
Before it, XLA:CPU's OperandUpcaster has given a dot or convolution with bf16 operands and an f32 result
f32 converts of its operands, so those read the unrounded f32 value too.  Measured against XLA:CPU
(tests/golden/xla_suite/): `f32 convert(bf16 dot(...))` and `f32 dot(bf16 multiply(...), ...)` agree
bit for bit only without the bf16 rounding.

`rewrite(module)` returns the module as XLA:CPU computes it: each such convert becomes the producing
operation itself computed in f32 (its bf16 operands converted to f32, which is exact), under the
convert's name and location; each such dot/convolution operand becomes an f32 copy of the producing
operation.  The bf16 operation stays for its other users (who see the rounded value, as in XLA).  A
module without such a pattern is returned unchanged (the same object).

Only arithmetic producers count (elementwise arithmetic, dot, convolution): data movement, selects,
maximum/minimum and conversions give values that are already bf16, so reading them wide changes
nothing.  f8 types (normalized to f16) and f16 (computed natively) are left as they are.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from .. import ir
from ..opcodes import opcodes_where
from ..types import PRIMITIVE_TYPES

LOW, HIGH = "bf16", "f32"
# the opcodes whose bf16 result XLA:CPU computes in f32 and rounds: elementwise arithmetic that is not
# exact (an exact result, e.g. floor or maximum, is the same wide or rounded), dot and convolution
_PRODUCERS = opcodes_where(lambda o: o.family == "elementwise" and o.arithmetic and not o.exact) \
    | {"dot", "convolution"}
_UPCAST = frozenset({"dot", "convolution"})


def _is(shape, tname: str) -> bool:
    return isinstance(shape, ir.ArrayShape) and shape.element_type.name == tname


def _retype(shape: ir.ArrayShape, tname: str) -> ir.ArrayShape:
    return dataclasses.replace(shape, element_type=PRIMITIVE_TYPES[tname])


def _producer(ins: Optional[ir.Instruction]) -> bool:
    return ins is not None and ins.opcode in _PRODUCERS and _is(ins.shape, LOW)


def _wide_copy(src: ir.Instruction, name: str, at: ir.Instruction, by_name: dict,
               new: list) -> ir.Instruction:
    """`src` computed in f32 under `name` (located at `at`): its bf16 operands through new f32 converts,
    which are appended to `new`."""
    operands = []
    for k, o in enumerate(src.operands):
        oi = by_name.get(o)
        if oi is not None and _is(oi.shape, LOW):
            c = ir.Instruction(name=f"{name}.wide.{k}", opcode="convert", shape=_retype(oi.shape, HIGH),
                               operands=[o], loc=at.loc)
            new.append(c)
            operands.append(c.name)
        else:
            operands.append(o)
    return dataclasses.replace(src, name=name, shape=_retype(src.shape, HIGH), operands=operands,
                               is_root=at.is_root if name == at.name else False, loc=at.loc,
                               attr_locs={}, operand_offsets=(), operand_shapes=None)


def _rewrite_computation(comp: ir.Computation) -> Optional[ir.Computation]:
    by_name = {i.name: i for i in comp.instructions}
    out: list[ir.Instruction] = []
    changed = False
    for ins in comp.instructions:
        if ins.opcode == "convert" and _is(ins.shape, HIGH) and len(ins.operands) == 1 \
                and _producer(by_name.get(ins.operands[0])):
            new: list[ir.Instruction] = []
            wide = _wide_copy(by_name[ins.operands[0]], ins.name, ins, by_name, new)
            out += new + [wide]
            changed = True
            continue
        if ins.opcode in _UPCAST and _is(ins.shape, HIGH) and \
                any(_producer(by_name.get(o)) for o in ins.operands[:2]):
            operands = list(ins.operands)
            for k in (0, 1):
                src = by_name.get(operands[k]) if k < len(operands) else None
                if _producer(src):
                    new = []
                    wide = _wide_copy(src, f"{ins.name}.operand{k}", ins, by_name, new)
                    out += new + [wide]
                    operands[k] = wide.name
            out.append(dataclasses.replace(ins, operands=operands, operand_shapes=None))
            changed = True
            continue
        out.append(ins)
    if not changed:
        return None
    comp = dataclasses.replace(comp, instructions=out)
    comp.__dict__.pop("_root", None)
    return comp


def rewrite(module: ir.Module) -> ir.Module:
    """The module with XLA:CPU's bf16 excess precision made explicit (the same object when none applies)."""
    comps = []
    changed = False
    for c in module.computations:
        r = _rewrite_computation(c)
        comps.append(c if r is None else r)
        changed |= r is not None
    if not changed:
        return module
    return dataclasses.replace(module, computations=comps)
