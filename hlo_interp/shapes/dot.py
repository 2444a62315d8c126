"""Shape rules of contractions: dot, scaled-dot, ragged-dot, convolution."""
from __future__ import annotations

from typing import Optional, Sequence

from .. import ir
from ..types import PrimitiveType
from .reduce import window_output_dims
from .infer import (Ctx, Shape, ShapeError, array, check_enum, dynamic_of, higher_precision, human, register,
                   register_check)


def _maybe_upcast(from_type: PrimitiveType, preferred: Optional[PrimitiveType]) -> PrimitiveType:
    """The result type of dot/convolution: the instruction's own element type when it has one.
    (Older XLA refused an integral result narrower than the operands; XLA:CPU of jaxlib 0.10.2
    compiles s32 x s32 -> s8, so no such rule here.)"""
    if preferred is None or preferred == from_type:
        return from_type
    return preferred


def _preferred(c: Ctx) -> Optional[PrimitiveType]:
    d = c.declared
    if isinstance(d, ir.ArrayShape) and d.element_type.is_array_type:
        return d.element_type
    return None


def _dot_dims(c: Ctx, lhs: ir.ArrayShape, rhs: ir.ArrayShape, *, rhs_skip: Sequence[int] = ()):
    lc, rc = c.dims_attr("lhs_contracting_dims"), c.dims_attr("rhs_contracting_dims")
    lb, rb = c.dims_attr("lhs_batch_dims"), c.dims_attr("rhs_batch_dims")
    for name, ds, s in (("lhs", lc + lb, lhs), ("rhs", rc + rb, rhs)):
        for x in ds:
            if not 0 <= x < s.rank:
                raise ShapeError(f"{c.opcode}: {name} dimension number {x} out of range for rank {s.rank}")
        if len(set(ds)) != len(ds):
            raise ShapeError(f"{c.opcode}: a {name} dimension number is not unique in "
                             f"{{{','.join(map(str, ds))}}}")
    if len(lc) != len(rc):
        raise ShapeError(f"{c.opcode}: must specify the same number of contracting dimensions for lhs and rhs "
                         f"({human(lhs)} <dot> {human(rhs)})")
    for a, b in zip(lc, rc):
        if lhs.dims[a] != rhs.dims[b]:
            raise ShapeError(f"{c.opcode}: contracting dimension sizes do not match: lhs dimension {a} "
                             f"({lhs.dims[a]}) vs rhs dimension {b} ({rhs.dims[b]}) in {human(lhs)} <dot> "
                             f"{human(rhs)}")
    if len(lb) != len(rb):
        raise ShapeError(f"{c.opcode}: must specify the same number of batch dimensions for lhs and rhs")
    for a, b in zip(lb, rb):
        if lhs.dims[a] != rhs.dims[b]:
            raise ShapeError(f"{c.opcode}: batch dimension sizes must match for lhs/rhs: lhs dimension {a} "
                             f"({lhs.dims[a]}) vs rhs dimension {b} ({rhs.dims[b]})")
    ld, rd = dynamic_of(lhs), dynamic_of(rhs)
    dims = [lhs.dims[a] for a in lb]
    dyn = [ld[a] for a in lb]
    for i in range(lhs.rank):
        if i not in lc and i not in lb:
            dims.append(lhs.dims[i])
            dyn.append(ld[i])
    for i in range(rhs.rank):
        if i not in rc and i not in rb and i not in rhs_skip:
            dims.append(rhs.dims[i])
            dyn.append(rd[i])
    return dims, dyn


def _dot(c: Ctx) -> Shape:
    if len(c.ops) not in (2, 3):  # older sparse dots carry a metadata operand
        c.arity(2)
    lhs, rhs = c.array_op(0, "lhs"), c.array_op(1, "rhs")
    dims, dyn = _dot_dims(c, lhs, rhs)
    et = _maybe_upcast(higher_precision(lhs.element_type, rhs.element_type), _preferred(c))
    return array(et, dims, dyn)


def _scaled_dot(c: Ctx) -> Shape:
    c.arity(4)
    lhs, rhs = c.array_op(0, "lhs"), c.array_op(1, "rhs")
    for i, what in ((2, "lhs scale"), (3, "rhs scale")):
        sc = c.array_op(i, what)
        base = lhs if i == 2 else rhs
        if sc.rank not in (0, base.rank):
            raise ShapeError(f"scaled-dot: the {what} {human(sc)} must be a scalar or have the rank of "
                             f"{human(base)}")
    dims, dyn = _dot_dims(c, lhs, rhs)
    et = _maybe_upcast(higher_precision(lhs.element_type, rhs.element_type), _preferred(c))
    return array(et, dims, dyn)


def _ragged_dot(c: Ctx) -> Shape:
    c.arity(3)
    lhs, rhs, groups = c.array_op(0, "lhs"), c.array_op(1, "rhs"), c.array_op(2, "group sizes")
    # (XLA's inference puts no type rule on the group sizes; jaxlib 0.10.2 infers with f32 ones)
    if groups.rank < 1:
        raise ShapeError(f"ragged-dot group sizes must have rank >= 1, got {human(groups)}")
    lr = c.dims_attr("lhs_ragged_dims")
    rg = c.dims_attr("rhs_group_dims")
    if len(lr) != 1:
        raise ShapeError("ragged-dot needs exactly one lhs ragged dimension")
    r = lr[0]
    if not 0 <= r < lhs.rank:
        raise ShapeError(f"ragged-dot: lhs ragged dimension {r} out of range for rank {lhs.rank}")
    lc, lb = c.dims_attr("lhs_contracting_dims"), c.dims_attr("lhs_batch_dims")
    g = groups.dims[-1]
    if r not in lc and r not in lb:
        # ragged non-contracting dimension: rhs has a group dimension
        if len(rg) != 1:
            raise ShapeError("ragged-dot with a ragged non-contracting lhs dimension needs one rhs group "
                             "dimension")
        if not 0 <= rg[0] < rhs.rank:
            raise ShapeError(f"ragged-dot: rhs group dimension {rg[0]} out of range for rank {rhs.rank}")
        if rhs.dims[rg[0]] != g:
            raise ShapeError(f"ragged-dot: rhs group dimension size {rhs.dims[rg[0]]} must equal the number of "
                             f"groups {g}")
        dims, dyn = _dot_dims(c, lhs, rhs, rhs_skip=rg)
    else:
        if rg:
            raise ShapeError("ragged-dot with a ragged contracting or batch dimension takes no rhs group "
                             "dimensions")
        dims, dyn = _dot_dims(c, lhs, rhs)
        if r in lc:
            nb = len(lb)
            dims = dims[:nb] + [g] + dims[nb:]
            dyn = dyn[:nb] + [False] + dyn[nb:]
    et = _maybe_upcast(higher_precision(lhs.element_type, rhs.element_type), _preferred(c))
    return array(et, dims, dyn)


def _convolution(c: Ctx) -> Shape:
    c.arity(2)
    lhs, rhs = c.array_op(0, "lhs"), c.array_op(1, "rhs")
    dn: ir.ConvDims = c.attr("dim_labels")
    if dn is None:
        raise ShapeError("convolution needs dim_labels=")
    window = c.attr("window") or ir.Window(())
    fgc = c.attr("feature_group_count", 1)
    bgc = c.attr("batch_group_count", 1)
    return conv_shape(lhs, rhs, dn, window, fgc, bgc, _preferred(c))


def conv_shape(lhs: ir.ArrayShape, rhs: ir.ArrayShape, dn: ir.ConvDims, window: ir.Window, fgc: int,
               bgc: int, preferred: Optional[PrimitiveType]) -> ir.ArrayShape:
    if fgc <= 0:
        raise ShapeError(f"feature_group_count must be a positive number, got {fgc}")
    if bgc <= 0:
        raise ShapeError(f"batch_group_count must be a positive number, got {bgc}")
    if fgc > 1 and bgc > 1:
        raise ShapeError(f"both batch_group_count {bgc} and feature_group_count {fgc} cannot be greater than 1")
    nsp = len(dn.input_spatial)
    if len(window.dims) != nsp:
        raise ShapeError(f"the window has {len(window.dims)} dimensions but the convolution has {nsp} spatial "
                         f"dimensions ({dn.text})")
    nd = nsp + 2
    if lhs.rank != nd:
        raise ShapeError(f"the lhs of a convolution should have rank {nd}; lhs: {human(lhs)}")
    if rhs.rank != nd:
        raise ShapeError(f"the rhs of a convolution should have rank {nd}; rhs: {human(rhs)}")
    in_sp = [lhs.dims[i] for i in dn.input_spatial]
    in_f = lhs.dims[dn.input_feature]
    in_b = lhs.dims[dn.input_batch]
    k_sp = [rhs.dims[i] for i in dn.kernel_spatial]
    k_in = rhs.dims[dn.kernel_input_feature]
    k_out = rhs.dims[dn.kernel_output_feature]
    if k_out % bgc:
        raise ShapeError(f"expected output feature dimension size ({k_out}) to be a multiple of batch group "
                         f"count {bgc}; got <conv>({human(lhs)}, {human(rhs)})")
    if in_f % fgc or in_f // fgc != k_in:
        raise ShapeError(f"expected lhs feature dimension (value {in_f}) to be a multiple of "
                         f"feature_group_count (value {fgc}), and lhs feature dimension / feature_group_count = "
                         f"rhs feature dimension (value {k_in}); got <conv>({human(lhs)}, {human(rhs)})")
    if k_out % fgc:
        raise ShapeError(f"expected output feature dimension (value {k_out}) to be divisible by "
                         f"feature_group_count (value {fgc}); got <conv>({human(lhs)}, {human(rhs)})")
    if in_b % bgc:
        raise ShapeError(f"expected input batch dimension (value {in_b}) to be divisible by batch_group_count "
                         f"(value {bgc}); got <conv>({human(lhs)}, {human(rhs)})")
    w_sizes = [w.size for w in window.dims]
    if k_sp != w_sizes:
        raise ShapeError(f"window dimensions {'x'.join(map(str, w_sizes))} do not match the rhs spatial "
                         f"dimensions {'x'.join(map(str, k_sp))} (rhs {human(rhs)}, {dn.text})")
    out_sp = window_output_dims(in_sp, window, "convolution")
    dims = [0] * nd
    dims[dn.output_batch] = in_b // bgc
    dims[dn.output_feature] = k_out
    for i, o in enumerate(dn.output_spatial):
        dims[o] = out_sp[i]
    dyn = [False] * nd
    ld = dynamic_of(lhs)
    if ld[dn.input_batch]:
        dyn[dn.output_batch] = True
    for j, i in enumerate(dn.input_spatial):
        if ld[i]:
            dyn[dn.output_spatial[j]] = True
    et = _maybe_upcast(higher_precision(lhs.element_type, rhs.element_type), preferred)
    return array(et, dims, dyn)


register("dot", _dot)
register("scaled-dot", _scaled_dot)
register("ragged-dot", _ragged_dot)
register("convolution", _convolution)


# --------------------------------------------------------------------------------------------------
# Verifier checks beyond the shape rule (run by shapes/verify.py's checker, `chk`)

_DOT_ALGORITHMS = frozenset({  # PrecisionConfig.Algorithm names without ALG_, lower case (AlgorithmToString)
    "unset", "dot_any_f8_any_f8_f32", "dot_any_f8_any_f8_f32_fast_accum", "dot_f16_f16_f16",
    "dot_f16_f16_f32", "dot_bf16_bf16_bf16", "dot_bf16_bf16_f32", "dot_bf16_bf16_f32_x3",
    "dot_bf16_bf16_f32_x6", "dot_bf16_bf16_f32_x9", "dot_tf32_tf32_f32", "dot_tf32_tf32_f32_x3",
    "dot_f32_f32_f32", "dot_f64_f64_f64"})


def _check_algorithm(chk, comp, ins, operand_shapes, shape) -> None:
    # E115: ParseAlgorithm refuses other values
    check_enum(chk, comp, ins, "algorithm", _DOT_ALGORITHMS)


register_check("dot scaled-dot", _check_algorithm)


def _count_dot(chk, comp, ins):
    # a sparse dot (older text) has one metadata operand per sparsity descriptor
    n = len(ins.operands)
    expected = 2 + str(ins.attrs["sparsity"].text).count("@") if "sparsity" in ins.attrs else 2
    if n != expected:
        chk.add("E103", f"dot expects {expected} operand(s), but has {n}", ins.loc, comp, ins)
        return False
    return None


register_check("dot", _count_dot, phase="operands")
