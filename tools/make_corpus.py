#!/usr/bin/env python3
"""Regenerate tests/corpus/jax/: a corpus of REAL HLO text printed by XLA itself (dev-only).

This script is a developer tool.  It needs JAX (``pip install jax``), which is NOT a dependency of
hlo-interp: the package and its tests only ever read the text files written here.

For each of a few hundred small JAX programs ("cases") it writes

    <out>/<case>.before.hlo   jax.jit(f).lower(*args).as_text(dialect="hlo")   (pre-optimization)
    <out>/<case>.after.hlo    jax.jit(f).lower(*args).compile().as_text()        (XLA:CPU, optimized)

and, for a handful of cases, reruns the program in a subprocess with ``XLA_FLAGS=--xla_dump_to=DIR``
and copies XLA's own dump files ``*.before_optimizations.txt`` / ``*after_optimizations.txt`` into
``<out>/dumps/``.  Every text is checked with XLA's own parser (``jaxlib._hlo.hlo_module_from_text``)
before it is written; texts XLA rejects, programs that fail to lower/compile on the installed JAX,
and files over 400 KB are skipped with a warning (recorded in ``<out>/MANIFEST.json``).

The process fakes 8 CPU devices (``--xla_force_host_platform_device_count=8``) so that programs
using shard_map / pmap / sharded jit produce collectives (all-reduce, all-gather, reduce-scatter,
all-to-all, collective-permute, collective-broadcast, partition-id, replica-id) and shardings.

Usage:
    python3 tools/make_corpus.py [--out DIR] [--only REGEX] [--no-dumps] [--list] [--keep]
"""
from __future__ import annotations

import os
import sys

_DEV_FLAG = "--xla_force_host_platform_device_count=8"
if _DEV_FLAG not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + _DEV_FLAG).strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
import functools  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable, Optional  # noqa: E402

import numpy as np  # noqa: E402

try:
    import jax  # noqa: E402
    import jax.numpy as jnp  # noqa: E402
    from jax import lax  # noqa: E402
    from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402
except ImportError:  # pragma: no cover
    sys.exit("make_corpus.py needs JAX (dev-only tool): pip install jax")

warnings.filterwarnings("ignore")
# Source locations in metadata/stack frames: keep only the file's base name, so the corpus does not
# depend on where the repository is checked out.
jax.config.update("jax_hlo_source_file_canonicalization_regex", r".*/")

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "tests" / "corpus" / "jax"
MAX_FILE = 400 * 1024
MAX_DUMP = 300 * 1024

# XLA's opcode text names (xla/hlo/ir/hlo_opcode.h), used for the coverage summary.
XLA_OPCODES = """abs acos acosh add add-dependency after-all all-gather all-gather-done all-gather-start
all-reduce all-reduce-done all-reduce-start all-to-all and asin asinh async-done async-start
async-update atan atan2 atanh batch-norm-grad batch-norm-inference batch-norm-training bitcast
bitcast-convert broadcast call cbrt ceil cholesky clamp collective-broadcast collective-permute
collective-permute-done collective-permute-start collective-reduce compare complex concatenate
conditional constant convert convolution copy copy-done copy-start cosh cosine count-leading-zeros
custom-call divide domain dot dynamic-reshape dynamic-slice dynamic-update-slice erf exponential
exponential-minus-one fft floor fusion gather get-dimension-size get-tuple-element imag infeed iota
is-finite log log-plus-one logistic map maximum minimum mulhi multiply negate not opt-barrier or
outfeed pad parameter partition-id popcnt power ragged-all-to-all ragged-dot real recv recv-done
reduce reduce-precision reduce-scatter reduce-window remainder replica-id reshape reverse rng
rng-bit-generator rng-get-and-update-state round-nearest-afz round-nearest-even rsqrt scaled-dot scan
scatter select select-and-scatter send send-done set-dimension-size shift-left
shift-right-arithmetic shift-right-logical shuffle sign sine sinh slice sort sqrt stochastic-convert
subtract tan tanh topk transpose triangular-solve tuple while xor""".split()

# --------------------------------------------------------------------------------------------------
# argument specs: "f32[4,3]" strings, turned into ShapeDtypeStructs lazily (inside the x64 context)

DTYPES = {
    "pred": "bool", "s2": "int2", "s4": "int4", "s8": "int8", "s16": "int16", "s32": "int32",
    "s64": "int64", "u2": "uint2", "u4": "uint4", "u8": "uint8", "u16": "uint16", "u32": "uint32",
    "u64": "uint64", "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
    "c64": "complex64", "c128": "complex128", "f8e4m3fn": "float8_e4m3fn", "f8e5m2": "float8_e5m2",
    "f8e4m3": "float8_e4m3", "f8e3m4": "float8_e3m4", "f8e4m3fnuz": "float8_e4m3fnuz",
    "f8e5m2fnuz": "float8_e5m2fnuz", "f8e4m3b11fnuz": "float8_e4m3b11fnuz",
    "f8e8m0fnu": "float8_e8m0fnu", "f4e2m1fn": "float4_e2m1fn",
}
WIDE = {"s64", "u64", "f64", "c128"}


def dt(tag: str):
    return jnp.dtype(getattr(jnp, DTYPES[tag]))


_SPEC = re.compile(r"^([a-z0-9]+)\[([0-9,]*)\]$")


def _spec_tag(s: str) -> str:
    m = _SPEC.match(s)
    if not m:
        raise ValueError(f"bad arg spec {s!r}")
    return m.group(1)


def spec(s: str, sharding=None):
    m = _SPEC.match(s)
    if not m:
        raise ValueError(f"bad arg spec {s!r}")
    shape = tuple(int(d) for d in m.group(2).split(",") if d)
    if sharding is not None:
        return jax.ShapeDtypeStruct(shape, dt(m.group(1)), sharding=sharding)
    return jax.ShapeDtypeStruct(shape, dt(m.group(1)))


# --------------------------------------------------------------------------------------------------
# case registry


@dataclass
class Case:
    name: str
    fn: Callable
    args: Any  # list of specs/objects, or a zero-arg callable returning the list
    x64: bool = False
    config: dict = field(default_factory=dict)
    jit: dict = field(default_factory=dict)
    lower: Optional[Callable] = None  # custom (fn, args) -> jax.stages.Lowered
    dump: bool = False
    family: str = ""
    platforms: tuple = ()  # lowering_platforms (e.g. ("cuda",)): before text only


CASES: dict[str, Case] = {}
_FAMILY = [""]


def family(name: str) -> None:
    _FAMILY[0] = name


def add(name: str, fn: Callable, *args, x64: bool = False, config=None, jit=None, lower=None,
        dump: bool = False, platforms: tuple = ()) -> None:
    if name in CASES:
        raise ValueError(f"duplicate case {name}")
    if len(args) == 1 and callable(args[0]) and not isinstance(args[0], str):
        argv = args[0]
    else:
        argv = list(args)
        if any(isinstance(a, str) and _spec_tag(a) in WIDE for a in argv):
            x64 = True
    CASES[name] = Case(name, fn, argv, x64, dict(config or {}), dict(jit or {}), lower, dump,
                       _FAMILY[0], tuple(platforms))


def _materialize(c: Case) -> list:
    argv = c.args() if callable(c.args) else c.args
    return [spec(a) if isinstance(a, str) else a.make() if isinstance(a, _Lazy) else a
            for a in argv]


def _named(fn: Callable, name: str) -> Callable:
    """`fn` renamed to `name` (the HLO module becomes jit_<name>); keeps its signature, so JAX still
    names the parameters after the Python arguments."""
    def wrapper(*a):
        return fn(*a)
    try:
        functools.update_wrapper(wrapper, fn)
    except Exception:  # noqa: BLE001
        pass
    wrapper.__name__ = name
    wrapper.__qualname__ = name
    return wrapper


class _Config:
    """Temporarily apply jax.config settings (x64, PRNG impl, ...)."""

    def __init__(self, settings: dict):
        self.settings = settings
        self.old: dict = {}

    def __enter__(self):
        for k, v in self.settings.items():
            self.old[k] = getattr(jax.config, k)
            jax.config.update(k, v)

    def __exit__(self, *exc):
        for k, v in self.old.items():
            jax.config.update(k, v)


def lower_case(c: Case):
    """-> (before_text, after_text or None, compile error or None).  Raises if lowering fails."""
    settings = dict(c.config)
    if c.x64:
        settings["jax_enable_x64"] = True
    with _Config(settings):
        args = _materialize(c)
        fn = _named(c.fn, c.name)
        if c.lower is not None:
            lowered = c.lower(fn, args)
        elif c.platforms:
            # lowered for another platform: there is no XLA:CPU compile, only the "before" text
            lowered = jax.jit(fn, **c.jit).trace(*args).lower(lowering_platforms=c.platforms)
        else:
            lowered = jax.jit(fn, **c.jit).lower(*args)
        before = lowered.as_text(dialect="hlo")
        if c.platforms and c.platforms != ("cpu",):
            return before, None, f"lowered for {','.join(c.platforms)}: not compiled"
        try:
            after = lowered.compile().as_text()
        except Exception as e:  # noqa: BLE001
            return before, None, _short_err(e)
    return before, after, None


def _short_err(e: BaseException) -> str:
    s = str(e).strip()
    return f"{type(e).__name__}: {s.splitlines()[0][:200] if s else ''}"


# --------------------------------------------------------------------------------------------------
# the programs

MESH = jax.make_mesh((8,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
MESH2 = jax.make_mesh((4, 2), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)


class _Lazy:
    """An argument built at lowering time (e.g. a ShapeDtypeStruct with a sharding)."""

    def __init__(self, make: Callable):
        self.make = make


def sh(spec_str: str, *pspec, mesh=None):
    return _Lazy(lambda: spec(spec_str, NamedSharding(mesh or MESH, P(*pspec))))


def smap(f, in_specs, out_specs, mesh=None):
    return jax.shard_map(f, mesh=mesh or MESH, in_specs=in_specs, out_specs=out_specs)


def _pmap_lower(fn, args, **kw):
    return jax.pmap(fn, axis_name="i", **kw).lower(*args)


FLOATS = ["f32", "f64", "f16", "bf16"]
INTS = ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]
ALL_NUM = FLOATS + INTS + ["c64", "c128"]


def _cases_elementwise() -> None:
    family("elementwise-unary")
    unary = {
        "exp": jnp.exp, "exp2": jnp.exp2, "log": jnp.log, "log1p": jnp.log1p, "expm1": jnp.expm1,
        "sin": jnp.sin, "cos": jnp.cos, "tan": lax.tan, "tanh": jnp.tanh, "sinh": jnp.sinh,
        "cosh": jnp.cosh, "asin": jnp.arcsin, "acos": jnp.arccos, "atan": jnp.arctan,
        "asinh": jnp.arcsinh, "acosh": jnp.arccosh, "atanh": jnp.arctanh, "sqrt": jnp.sqrt,
        "rsqrt": lax.rsqrt, "cbrt": lax.cbrt, "abs": jnp.abs, "neg": jnp.negative, "sign": lax.sign,
        "floor": jnp.floor, "ceil": jnp.ceil,
        "round_afz": partial(lax.round, rounding_method=lax.RoundingMethod.AWAY_FROM_ZERO),
        "round_even": partial(lax.round, rounding_method=lax.RoundingMethod.TO_NEAREST_EVEN),
        "is_finite": lax.is_finite, "logistic": lax.logistic, "erf": lax.erf,
        "erfc": lax.erfc, "erf_inv": lax.erf_inv, "lgamma": lax.lgamma, "digamma": lax.digamma,
        "bessel_i0e": lax.bessel_i0e, "bessel_i1e": lax.bessel_i1e, "square": lax.square,
        "reciprocal": jnp.reciprocal, "isnan": jnp.isnan, "isinf": jnp.isinf,
        "signbit": jnp.signbit, "trunc": jnp.trunc, "rint": jnp.rint,
    }
    for n, f in unary.items():
        add(f"unary_{n}_f32", f, "f32[8]")
    for t in ["f64", "f16", "bf16"]:
        for n in ["exp", "log", "sin", "tanh", "sqrt", "erf", "logistic", "round_even"]:
            add(f"unary_{n}_{t}", unary[n], f"{t}[2,3]")
    for t in ["s8", "s16", "s32", "s64", "c64", "c128"]:
        add(f"unary_abs_{t}", jnp.abs, f"{t}[5]")
        add(f"unary_neg_{t}", jnp.negative, f"{t}[5]")
    for t in ["s8", "s32", "s64", "f16"]:
        add(f"unary_sign_{t}", lax.sign, f"{t}[5]")
    for t in ["pred", "u8", "s32", "u64"]:
        add(f"unary_not_{t}", lax.bitwise_not, f"{t}[6]")
    for t in ["u8", "s16", "s32", "u64"]:
        add(f"unary_popcnt_{t}", lax.population_count, f"{t}[6]")
        add(f"unary_clz_{t}", lax.clz, f"{t}[6]")
    for t in ["c64", "c128"]:
        for n, f in [("exp", jnp.exp), ("log", jnp.log), ("sqrt", jnp.sqrt), ("sin", jnp.sin),
                     ("tanh", jnp.tanh), ("rsqrt", lax.rsqrt)]:
            add(f"unary_{n}_{t}", f, f"{t}[4]")
    family("complex")
    add("complex_real_c64", lax.real, "c64[4]")
    add("complex_imag_c128", lax.imag, "c128[4]")
    add("complex_make_f32", lax.complex, "f32[4]", "f32[4]")
    add("complex_make_f64", lax.complex, "f64[4]", "f64[4]")
    add("complex_conj_c64", lax.conj, "c64[4]")
    add("complex_angle_c64", jnp.angle, "c64[4]")
    add("complex_mul_div_c64", lambda a, b: a * b / (a - b), "c64[3]", "c64[3]")
    add("complex_pow_c64", lambda a, b: a ** b, "c64[3]", "c64[3]")
    add("complex_abs_c128", jnp.abs, "c128[3,2]")

    family("elementwise-binary")
    binary = {
        "add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "div": lax.div,
        "rem": lax.rem, "max": lax.max, "min": lax.min, "pow": lax.pow, "atan2": lax.atan2,
        "nextafter": lax.nextafter, "and": lax.bitwise_and, "or": lax.bitwise_or,
        "xor": lax.bitwise_xor, "shl": lax.shift_left, "shra": lax.shift_right_arithmetic,
        "shrl": lax.shift_right_logical, "floordiv": jnp.floor_divide, "mod": jnp.mod,
        "truediv": jnp.true_divide, "hypot": jnp.hypot, "logaddexp": jnp.logaddexp,
        "copysign": jnp.copysign, "fmax": jnp.fmax, "ldexp_like": lambda a, b: a * jnp.exp2(b),
    }
    for n in ["sub", "div", "rem", "max", "min", "pow", "atan2", "nextafter",
              "floordiv", "mod", "truediv", "hypot", "logaddexp", "copysign", "fmax"]:
        add(f"binary_{n}_f32", binary[n], "f32[4,4]", "f32[4,4]")
    for t in ALL_NUM:
        add(f"binary_add_{t}", jnp.add, f"{t}[3]", f"{t}[3]")
        add(f"binary_mul_{t}", lax.mul, f"{t}[3]", f"{t}[3]")
    add("binary_or_pred", lax.bitwise_or, "pred[3]", "pred[3]")
    add("binary_and_pred", lax.bitwise_and, "pred[3]", "pred[3]")
    add("binary_xor_pred", lax.bitwise_xor, "pred[3]", "pred[3]")
    for t in ["s8", "s32", "u32", "s64", "u64"]:
        add(f"binary_div_{t}", lax.div, f"{t}[4]", f"{t}[4]")
        add(f"binary_rem_{t}", lax.rem, f"{t}[4]", f"{t}[4]")
        add(f"binary_floordiv_{t}", jnp.floor_divide, f"{t}[4]", f"{t}[4]")
    for t in ["u8", "s16", "s32", "u32", "s64", "u64"]:
        for n in ["and", "or", "xor", "shl", "shra", "shrl"]:
            add(f"binary_{n}_{t}", binary[n], f"{t}[4]", f"{t}[4]")
    for t in ["s8", "u64", "bf16", "f64", "f16"]:
        add(f"binary_max_{t}", lax.max, f"{t}[4]", f"{t}[4]")
        add(f"binary_min_{t}", lax.min, f"{t}[4]", f"{t}[4]")
    add("binary_pow_f64", lax.pow, "f64[4]", "f64[4]")
    add("binary_pow_f32_s32", lax.pow, "f32[4]", "s32[4]")
    add("binary_pow_s32", jnp.power, "s32[4]", "s32[4]")
    add("binary_atan2_f64", lax.atan2, "f64[4]", "f64[4]")
    add("binary_nextafter_f64", lax.nextafter, "f64[4]", "f64[4]")
    add("binary_nextafter_bf16", lax.nextafter, "bf16[4]", "bf16[4]")
    add("binary_rem_f16", lax.rem, "f16[4]", "f16[4]")
    for k in [2, 3, 5, -1, -2]:
        add(f"integer_pow_{'m' if k < 0 else ''}{abs(k)}_f32", partial(lax.integer_pow, y=k), "f32[4]")
    add("integer_pow_3_s32", partial(lax.integer_pow, y=3), "s32[4]")
    add("integer_pow_7_c64", partial(lax.integer_pow, y=7), "c64[4]")
    add("special_igamma_f32", lax.igamma, "f32[4]", "f32[4]")
    add("special_igammac_f32", lax.igammac, "f32[4]", "f32[4]")
    add("special_igamma_f64", lax.igamma, "f64[4]", "f64[4]")
    add("special_polygamma_f32", lax.polygamma, "f32[4]", "f32[4]")
    add("special_zeta_f32", lax.zeta, "f32[4]", "f32[4]")
    add("special_betainc_f32", lax.betainc, "f32[4]", "f32[4]", "f32[4]")
    add("special_random_gamma_grad_f32", lax.random_gamma_grad, "f32[4]", "f32[4]")
    add("special_grad_igamma_f32", jax.grad(lambda a, x: lax.igamma(a, x).sum(), argnums=(0, 1)),
        "f32[4]", "f32[4]")
    add("special_grad_lgamma_digamma_f32",
        jax.grad(lambda x: (lax.lgamma(x) + lax.digamma(x)).sum()), "f32[4]")

    family("compare/select")
    for d, f in [("eq", lax.eq), ("ne", lax.ne), ("lt", lax.lt), ("le", lax.le), ("gt", lax.gt),
                 ("ge", lax.ge)]:
        add(f"compare_{d}_f32", f, "f32[5]", "f32[5]")
        add(f"compare_{d}_s32", f, "s32[5]", "s32[5]")
        add(f"compare_{d}_u8", f, "u8[5]", "u8[5]")
    for t in ["pred", "bf16", "f64", "s64", "u64"]:
        add(f"compare_lt_{t}", lax.lt, f"{t}[5]", f"{t}[5]")
    add("compare_eq_c64", lax.eq, "c64[5]", "c64[5]")
    add("compare_ne_c128", lax.ne, "c128[5]", "c128[5]")
    add("compare_totalorder_f32", lambda a: lax.sort(a), "f32[5]")
    add("select_f32", lax.select, "pred[4]", "f32[4]", "f32[4]")
    add("select_scalar_pred", lambda p, a, b: jnp.where(p, a, b), "pred[]", "s32[4]", "s32[4]")
    add("select_n_3", lambda i, a, b, c: lax.select_n(i, a, b, c), "s32[4]", "f32[4]", "f32[4]",
        "f32[4]")
    add("select_where_broadcast", lambda x: jnp.where(x > 0, x, 0.5 * x), "f32[3,4]")
    add("select_tuple_c64", lax.select, "pred[4]", "c64[4]", "c64[4]")
    add("clamp_f32", lax.clamp, "f32[]", "f32[6]", "f32[]")
    add("clamp_s32_array", lax.clamp, "s32[6]", "s32[6]", "s32[6]")
    add("clamp_jnp_clip_bf16", lambda x: jnp.clip(x, -1, 1), "bf16[6]")


def _cases_convert() -> None:
    family("convert")
    pairs = [("f32", "s32"), ("s32", "f32"), ("f32", "f16"), ("f32", "bf16"), ("f16", "f32"),
             ("bf16", "f32"), ("f32", "f64"), ("f64", "f32"), ("f32", "u8"), ("pred", "f32"),
             ("f32", "pred"), ("s8", "s64"), ("u32", "f64"), ("f32", "c64"), ("c64", "c128"),
             ("s32", "u32"), ("u64", "s8"), ("f64", "s64"), ("bf16", "f16"), ("s32", "pred"),
             ("f32", "u64"), ("c64", "f32")]
    for a, b in pairs:
        add(f"convert_{a}_{b}", partial(lax.convert_element_type, new_dtype=dt(b)), f"{a}[4]",
            x64=b in WIDE)
    for t in ["f8e4m3fn", "f8e5m2", "f8e4m3", "f8e3m4", "f8e4m3fnuz", "f8e5m2fnuz",
              "f8e4m3b11fnuz", "f8e8m0fnu", "f4e2m1fn", "s4", "u4", "s2", "u2"]:
        add(f"convert_f32_{t}", partial(lax.convert_element_type, new_dtype=dt(t)), "f32[8]")
        add(f"convert_{t}_f32", partial(lax.convert_element_type, new_dtype=dt("f32")), f"{t}[8]")
    add("convert_f8e4m3fn_bf16", partial(lax.convert_element_type, new_dtype=dt("bf16")),
        "f8e4m3fn[8]")
    add("arith_f8e4m3fn", lambda a, b: a * b + a, "f8e4m3fn[8]", "f8e4m3fn[8]")
    add("arith_f8e5m2_dot", lambda a, b: jnp.dot(a, b, preferred_element_type=jnp.float32),
        "f8e5m2[4,8]", "f8e5m2[8,4]")
    add("arith_s4", lambda a, b: a + b, "s4[8]", "s4[8]")
    add("arith_u4", lambda a, b: a * b, "u4[8]", "u4[8]")
    add("arith_s4_to_s8_dot", lambda a, b: jnp.dot(a.astype(jnp.int8), b.astype(jnp.int8),
                                                   preferred_element_type=jnp.int32),
        "s4[4,8]", "s4[8,2]")
    family("bitcast-convert")
    bc = [("f32", "s32", "f32[4]"), ("s32", "f32", "s32[4]"), ("f32", "u8", "f32[4]"),
          ("u8", "f32", "u8[4,4]"), ("f64", "u32", "f64[3]"), ("u16", "bf16", "u16[3]"),
          ("f16", "s16", "f16[3]"), ("u16", "u32", "u16[3,2]"), ("f64", "s64", "f64[3]"),
          ("f32", "bf16", "f32[3]"), ("s8", "f8e4m3fn", "s8[3]")]
    for a, b, s in bc:
        add(f"bitcast_convert_{a}_{b}", partial(lax.bitcast_convert_type, new_dtype=dt(b)), s,
            x64=a in WIDE or b in WIDE)
    family("reduce-precision")
    add("reduce_precision_e5m10", partial(lax.reduce_precision, exponent_bits=5, mantissa_bits=10),
        "f32[8]")
    add("reduce_precision_e8m7", partial(lax.reduce_precision, exponent_bits=8, mantissa_bits=7),
        "f32[8]")
    add("reduce_precision_f64_e11m20",
        partial(lax.reduce_precision, exponent_bits=11, mantissa_bits=20), "f64[8]")


def _cases_shape() -> None:
    family("shape/data-movement")
    add("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1,)), "f32[3]")
    add("broadcast_scalar", lambda x: jnp.broadcast_to(x, (4, 5)), "s32[]")
    add("broadcast_add_rank", lambda a, b: a + b, "f32[4,1]", "f32[1,5]")
    add("reshape", lambda x: x.reshape(6, 4), "f32[2,3,4]")
    add("reshape_squeeze_expand", lambda x: jnp.expand_dims(jnp.squeeze(x, 1), 0), "f32[3,1,4]")
    add("transpose", lambda x: jnp.transpose(x, (2, 0, 1)), "f32[2,3,4]")
    add("transpose_t_add", lambda x: x + x.T, "f32[5,5]")
    add("slice", lambda x: x[1:3, ::2], "f32[4,6]")
    add("slice_strided_neg", lambda x: x[::-2], "f32[9]")
    add("split", lambda x: jnp.split(x, 3), "f32[9,2]")
    add("dynamic_slice", lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 3)), "f32[5,3]", "s32[]")
    add("dynamic_slice_index", lambda x, i: x[i], "f32[5,3]", "s32[]")
    add("dynamic_update_slice", lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 1)),
        "f32[5,4]", "f32[2,2]", "s32[]")
    add("dynamic_update_slice_s64", lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)),
        "s64[8]", "s64[3]", "s64[]")
    add("concatenate", lambda a, b, c: jnp.concatenate([a, b, c], axis=1), "f32[2,1]", "f32[2,3]",
        "f32[2,2]")
    add("stack", lambda a, b: jnp.stack([a, b], -1), "s32[3]", "s32[3]")
    add("pad_edge", lambda x: lax.pad(x, 0.0, [(1, 2, 0), (0, 3, 0)]), "f32[2,3]")
    add("pad_negative_interior", lambda x: lax.pad(x, -1.0, [(-1, 2, 1), (2, -2, 2)]), "f32[4,5]")
    add("pad_jnp_reflect", lambda x: jnp.pad(x, 2, mode="reflect"), "f32[6]")
    add("pad_jnp_wrap_edge", lambda x: jnp.pad(x, ((1, 1), (2, 0)), mode="edge"), "s32[3,3]")
    add("rev", lambda x: lax.rev(x, (0, 2)), "f32[2,3,4]")
    add("flip_roll", lambda x: jnp.roll(jnp.flip(x, 1), 2, axis=1), "f32[3,5]")
    add("iota_arange", lambda: jnp.arange(10, dtype=jnp.int32) * 2)
    add("iota_2d", lambda: lax.broadcasted_iota(jnp.float32, (3, 4), 1))
    add("iota_u8_eye", lambda: jnp.eye(4, dtype=jnp.uint8))
    add("iota_s64", lambda: jnp.arange(6, dtype=jnp.int64), x64=True)
    add("tile_repeat", lambda x: jnp.repeat(jnp.tile(x, (2, 1)), 2, axis=1), "f32[2,3]")
    add("tril_triu_diag", lambda x: jnp.tril(x) - jnp.triu(x, 1) + jnp.diag(jnp.diag(x)),
        "f32[4,4]")
    add("trace_outer_kron", lambda a, b: jnp.trace(jnp.outer(a, b)) + jnp.kron(a, b).sum(),
        "f32[3]", "f32[3]")
    add("meshgrid", lambda a, b: jnp.stack(jnp.meshgrid(a, b)), "f32[3]", "f32[4]")
    add("constant_small", lambda x: x + jnp.array([1.0, 2.0, 3.0, 4.0]), "f32[4]")
    add("constant_large", lambda x: x * jnp.asarray(np.linspace(0, 1, 1000, dtype=np.float32)),
        "f32[1000]")
    add("constant_tuple_like", lambda: (jnp.int8(3), jnp.array([True, False]),
                                        jnp.array([1 + 2j], jnp.complex64)))
    add("constant_special_floats", lambda x: x + jnp.array([np.inf, -np.inf, np.nan, -0.0], x.dtype),
        "f32[4]")
    add("constant_special_bf16", lambda x: x * jnp.array([np.inf, np.nan, 1e-3, 65504], x.dtype),
        "bf16[4]")
    add("tuple_output", lambda a, b: (a + 1, (b * 2, a)), "f32[2]", "s32[2]")
    add("empty_array", lambda a, b: jnp.concatenate([a, b]), "f32[0]", "f32[3]")
    add("scalar_only", lambda a, b: a * b + 1, "f32[]", "f32[]")
    add("donate_inplace", lambda a, b: (a + b, b), "f32[16]", "f32[16]",
        jit={"donate_argnums": (0,)})


def _cases_gather_scatter() -> None:
    family("gather/scatter")
    add("gather_take", lambda x, i: jnp.take(x, i, axis=0), "f32[10,4]", "s32[3]")
    add("gather_take_axis1_clip", lambda x, i: jnp.take(x, i, axis=1, mode="clip"), "f32[4,10]",
        "s32[5]")
    add("gather_take_fill", lambda x, i: jnp.take(x, i, mode="fill", fill_value=-1.0), "f32[10]",
        "s32[5]")
    add("gather_take_along_axis", lambda x, i: jnp.take_along_axis(x, i, axis=1), "f32[3,5]",
        "s32[3,2]")
    add("gather_adv_index", lambda x, i, j: x[i, j], "f32[6,7]", "s32[4]", "s32[4]")
    add("gather_adv_index_middle", lambda x, i: x[:, i, 1:], "f32[2,6,5]", "s32[3,2]")
    add("gather_s64_idx", lambda x, i: x[i], "f32[8]", "s64[3]")
    add("gather_u8_idx", lambda x, i: x[i], "f32[8,2]", "u8[3]")
    add("gather_lax_direct", lambda x, i: lax.gather(
        x, i, lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                         start_index_map=(0,)), slice_sizes=(1, 3),
        mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS), "f32[5,3]", "s32[4,1]")
    add("gather_batching_dims_vmap", jax.vmap(lambda x, i: x[i]), "f32[4,6]", "s32[4,2]")
    for op in ["set", "add", "mul", "min", "max", "subtract", "divide", "power"]:
        add(f"scatter_at_{op}", lambda x, i, u, op=op: getattr(x.at[i], op)(u), "f32[8]", "s32[3]",
            "f32[3]")
    add("scatter_at_set_2d", lambda x, i, u: x.at[i, :].set(u), "f32[5,4]", "s32[2]", "f32[2,4]")
    add("scatter_at_add_drop", lambda x, i, u: x.at[i].add(u, mode="drop"), "s32[8]", "s32[3]",
        "s32[3]")
    add("scatter_at_set_unique_sorted",
        lambda x, i, u: x.at[i].set(u, unique_indices=True, indices_are_sorted=True), "f32[8]",
        "s32[3]", "f32[3]")
    add("scatter_at_get_fill", lambda x, i: x.at[i].get(mode="fill", fill_value=0), "f32[8]",
        "s32[4]")
    add("scatter_segment_sum", lambda d, s: jax.ops.segment_sum(d, s, num_segments=4),
        "f32[10,3]", "s32[10]")
    add("scatter_segment_max", lambda d, s: jax.ops.segment_max(d, s, num_segments=4), "f32[10]",
        "s32[10]")
    add("scatter_bool_mask_where", lambda x: jnp.where(x > 0, x, 0).sum(), "f32[10]")
    add("scatter_grad_of_gather", jax.grad(lambda x, i: (x[i] ** 2).sum()), "f32[6,2]", "s32[4]")
    add("scatter_c64_add", lambda x, i, u: x.at[i].add(u), "c64[5]", "s32[2]", "c64[2]")
    add("scatter_lax_variadic", lambda x, y, i, u, v: lax.scatter_add(
        x, i, u, lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                             scatter_dims_to_operand_dims=(0,))) + y,
        "f32[6]", "f32[6]", "s32[2,1]", "f32[2]", "f32[2]")
    add("one_hot", lambda i: jax.nn.one_hot(i, 5), "s32[4]")
    add("histogram_searchsorted", lambda x: jnp.histogram(x, bins=5, range=(0.0, 1.0))[0],
        "f32[32]")
    for m in ["scan", "sort", "compare_all", "scan_unrolled"]:
        add(f"searchsorted_{m}", lambda a, v, m=m: jnp.searchsorted(a, v, method=m), "f32[16]",
            "f32[5]")
    add("interp", jnp.interp, "f32[5]", "f32[8]", "f32[8]")


def _cases_sort() -> None:
    family("sort/topk")
    add("sort_f32", jnp.sort, "f32[10]")
    add("sort_axis0_s32", lambda x: jnp.sort(x, axis=0), "s32[6,3]")
    add("sort_descending_bf16", lambda x: jnp.sort(x, descending=True), "bf16[8]")
    add("sort_u8", jnp.sort, "u8[12]")
    add("argsort_stable", lambda x: jnp.argsort(x, stable=True), "f32[10]")
    add("argsort_descending", lambda x: jnp.argsort(x, descending=True), "s32[4,5]")
    add("sort_multi_operand_numkeys2",
        lambda a, b, c: lax.sort((a, b, c), num_keys=2, is_stable=True), "s32[8]", "f32[8]",
        "u8[8]")
    add("sort_multi_operand_numkeys1", lambda a, b: lax.sort((a, b), num_keys=1), "f32[3,7]",
        "s32[3,7]")
    add("sort_key_val", lambda k, v: lax.sort_key_val(k, v, dimension=0), "f32[6,2]", "f32[6,2]")
    add("sort_complex", jnp.sort, "c64[5]")
    add("top_k", lambda x: lax.top_k(x, 3), "f32[10]")
    add("top_k_2d_s32", lambda x: lax.top_k(x, 2), "s32[4,8]")
    add("approx_max_k", lambda x: lax.approx_max_k(x, 4), "f32[4,128]")
    add("approx_min_k", lambda x: lax.approx_min_k(x, 4, recall_target=0.9), "f32[256]")
    add("median", jnp.median, "f32[9]")
    add("partition", lambda x: jnp.partition(x, 3), "f32[10]")
    add("quantile", lambda x: jnp.quantile(x, jnp.array([0.25, 0.5])), "f32[11]")
    add("random_permutation_sort", lambda k, x: jax.random.permutation(k, x), "u32[2]", "f32[10]")


def _cases_reduce() -> None:
    family("reduce")
    add("reduce_sum_f32", lambda x: x.sum(), "f32[4,5]")
    add("reduce_sum_axis_bf16", lambda x: x.sum(axis=1), "bf16[4,5]")
    add("reduce_sum_f16_keepdims", lambda x: x.sum(axis=0, keepdims=True), "f16[4,5]")
    add("reduce_prod_s32", lambda x: x.prod(axis=0), "s32[4,5]")
    add("reduce_max_f32", lambda x: x.max(axis=(0, 2)), "f32[2,3,4]")
    add("reduce_min_u8", lambda x: x.min(), "u8[7]")
    add("reduce_all_any", lambda x: (jnp.all(x > 0), jnp.any(x < 0)), "f32[6]")
    add("reduce_and_or_s32", lambda x: (lax.reduce_and(x, (0,)), lax.reduce_or(x, (0,)),
                                        lax.reduce_xor(x, (0,))), "s32[6]")
    add("reduce_mean_var", lambda x: (x.mean(0), x.var(0), x.std()), "f32[8,3]")
    add("reduce_sum_c64", lambda x: x.sum(), "c64[5]")
    add("reduce_sum_f64", lambda x: x.sum(0), "f64[5,2]")
    add("reduce_argmax", lambda x: jnp.argmax(x, axis=1), "f32[4,6]")
    add("reduce_argmin_s32", lambda x: jnp.argmin(x), "s32[9]")
    add("reduce_argmax_bf16", lambda x: jnp.argmax(x, axis=0), "bf16[5,3]")
    add("reduce_variadic_tuple", lambda a, b: lax.reduce(
        (a, b), (jnp.float32(0), jnp.int32(0)),
        lambda x, y: (x[0] + y[0], jnp.maximum(x[1], y[1])), (0,)), "f32[5,3]", "s32[5,3]")
    add("reduce_logsumexp", lambda x: jax.nn.logsumexp(x, axis=-1), "f32[3,7]")
    add("reduce_norm", lambda x: jnp.linalg.norm(x, axis=0), "f32[5,4]")
    add("reduce_count_nonzero", lambda x: jnp.count_nonzero(x), "s32[8]")

    family("reduce-window/cumulative")
    add("cumsum_f32", jnp.cumsum, "f32[10]")
    add("cumsum_reverse_s32", lambda x: lax.cumsum(x, axis=1, reverse=True), "s32[3,6]")
    add("cumprod", jnp.cumprod, "f32[8]")
    add("cummax", lambda x: lax.cummax(x, axis=0), "f32[9,2]")
    add("cummin_u8", lambda x: lax.cummin(x), "u8[9]")
    add("cumlogsumexp", lambda x: lax.cumlogsumexp(x), "f32[12]")
    add("associative_scan", lambda x: lax.associative_scan(jnp.add, x), "f32[16]")
    add("associative_scan_tuple", lambda a, b: lax.associative_scan(
        lambda x, y: (x[0] * y[0], x[1] * y[0] + y[1]), (a, b)), "f32[8]", "f32[8]")
    add("cumsum_grad", jax.grad(lambda x: jnp.cumsum(x).sum()), "f32[10]")

    def maxpool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")

    def avgpool(x):
        s = lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1),
                              ((0, 0), (1, 1), (0, 1), (0, 0)), window_dilation=(1, 2, 1, 1))
        return s / 4.0

    add("reduce_window_maxpool", maxpool, "f32[2,8,8,3]")
    add("reduce_window_avgpool_pad_dilation", avgpool, "f32[2,9,9,3]")
    add("reduce_window_base_dilation", lambda x: lax.reduce_window(
        x, 0.0, lax.add, (2, 2), (1, 1), "VALID", base_dilation=(2, 1)), "f32[5,5]")
    add("reduce_window_min_s32", lambda x: lax.reduce_window(
        x, jnp.iinfo(jnp.int32).max, lax.min, (3,), (2,), ((1, 1),)), "s32[10]")
    add("reduce_window_variadic", lambda x, y: lax.reduce_window(
        (x, y), (-jnp.inf, jnp.int32(0)), lambda a, b: (jnp.maximum(a[0], b[0]), a[1] + b[1]),
        (2,), (1,), "VALID"), "f32[8]", "s32[8]")
    add("select_and_scatter_maxpool_grad", jax.grad(lambda x: maxpool(x).sum()), "f32[2,8,8,3]")
    add("reduce_window_avgpool_grad", jax.grad(lambda x: avgpool(x).sum()), "f32[2,9,9,3]")
    add("reduce_window_maxpool_jvp", lambda x, t: jax.jvp(maxpool, (x,), (t,)), "f32[1,6,6,2]",
        "f32[1,6,6,2]")


def _cases_conv_dot() -> None:
    family("convolution")
    dn2 = ("NHWC", "HWIO", "NHWC")
    add("conv1d", lambda x, w: lax.conv_general_dilated(x, w, (1,), "SAME",
                                                        dimension_numbers=("NWC", "WIO", "NWC")),
        "f32[2,16,3]", "f32[3,3,4]")
    add("conv2d_nchw_valid", lambda x, w: lax.conv(x, w, (1, 1), "VALID"), "f32[1,3,8,8]",
        "f32[4,3,3,3]")
    add("conv2d_nhwc_strided_pad", lambda x, w: lax.conv_general_dilated(
        x, w, (2, 2), ((1, 2), (0, 1)), dimension_numbers=dn2), "f32[2,9,9,3]", "f32[3,3,3,8]")
    add("conv2d_rhs_dilation", lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "SAME", rhs_dilation=(2, 2), dimension_numbers=dn2), "f32[1,8,8,2]",
        "f32[3,3,2,2]")
    add("conv2d_lhs_dilation_transpose", lambda x, w: lax.conv_transpose(
        x, w, (2, 2), "SAME", dimension_numbers=dn2), "f32[1,4,4,3]", "f32[3,3,3,5]")
    add("conv2d_depthwise_fgc", lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=dn2, feature_group_count=4), "f32[1,6,6,4]",
        "f32[3,3,1,4]")
    add("conv2d_batch_group_count", lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "VALID", dimension_numbers=dn2, batch_group_count=2), "f32[4,5,5,3]",
        "f32[2,2,3,6]")
    add("conv3d", lambda x, w: lax.conv_general_dilated(
        x, w, (1, 2, 1), "SAME", dimension_numbers=("NDHWC", "DHWIO", "NDHWC")), "f32[1,6,6,6,2]",
        "f32[2,3,3,2,4]")
    add("conv2d_bf16_pref_f32", lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=dn2, preferred_element_type=jnp.float32),
        "bf16[1,5,5,2]", "bf16[3,3,2,3]")
    add("conv2d_s8_pref_s32", lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "VALID", dimension_numbers=dn2, preferred_element_type=jnp.int32),
        "s8[1,5,5,2]", "s8[3,3,2,3]")
    add("conv2d_f16", lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                                           dimension_numbers=dn2),
        "f16[1,5,5,2]", "f16[3,3,2,3]")
    add("conv2d_grad_grouped", jax.grad(lambda x, w: lax.conv_general_dilated(
        x, w, (2, 2), "SAME", dimension_numbers=dn2, feature_group_count=2).sum(),
        argnums=(0, 1)), "f32[2,8,8,4]", "f32[3,3,2,6]")
    add("conv1d_jnp_convolve", lambda a, b: jnp.convolve(a, b, mode="same"), "f32[16]", "f32[5]")
    add("conv1d_jnp_correlate_full", lambda a, b: jnp.correlate(a, b, mode="full"), "f32[10]",
        "f32[3]")

    family("dot")
    add("dot_matmul", jnp.matmul, "f32[4,8]", "f32[8,3]")
    add("dot_matvec", jnp.dot, "f32[4,8]", "f32[8]")
    add("dot_vecdot", jnp.vdot, "f32[8]", "f32[8]")
    add("dot_batch", jnp.matmul, "f32[2,4,8]", "f32[2,8,3]")
    add("dot_general_multi_contract", lambda a, b: lax.dot_general(
        a, b, (((1, 3), (2, 0)), ((0,), (1,)))), "f32[2,3,4,5]", "f32[5,2,3,6]")
    add("dot_bf16_pref_f32", lambda a, b: jnp.dot(a, b, preferred_element_type=jnp.float32),
        "bf16[4,8]", "bf16[8,3]")
    add("dot_s8_pref_s32", lambda a, b: lax.dot(a, b, preferred_element_type=jnp.int32),
        "s8[4,8]", "s8[8,3]")
    add("dot_precision_highest", lambda a, b: jnp.dot(a, b, precision=lax.Precision.HIGHEST),
        "f32[4,8]", "f32[8,3]")
    add("dot_precision_mixed", lambda a, b: lax.dot(
        a, b, precision=(lax.Precision.DEFAULT, lax.Precision.HIGH)), "f32[4,8]", "f32[8,3]")
    add("dot_c64", jnp.matmul, "c64[3,4]", "c64[4,2]")
    add("dot_f64", jnp.matmul, "f64[3,4]", "f64[4,2]")
    add("dot_f16", jnp.matmul, "f16[3,4]", "f16[4,2]")
    add("dot_s32", jnp.matmul, "s32[3,4]", "s32[4,2]")
    for i, eq in enumerate(["bij,bjk->bik", "ij,ij->", "ijk,kl->ijl", "bhqd,bhkd->bhqk",
                            "i,j->ij", "ii->i", "abc,cd,de->abe"]):
        shapes = {
            0: ["f32[2,3,4]", "f32[2,4,5]"], 1: ["f32[3,4]", "f32[3,4]"],
            2: ["f32[2,3,4]", "f32[4,5]"], 3: ["f32[1,2,4,8]", "f32[1,2,6,8]"],
            4: ["f32[3]", "f32[4]"], 5: ["f32[4,4]"], 6: ["f32[2,3,4]", "f32[4,5]", "f32[5,6]"],
        }[i]
        add(f"einsum_{i}", lambda *xs, eq=eq: jnp.einsum(eq, *xs), *shapes)
    add("tensordot", lambda a, b: jnp.tensordot(a, b, axes=([1, 2], [0, 1])), "f32[2,3,4]",
        "f32[3,4,5]")
    add("ragged_dot", lambda a, b, g: lax.ragged_dot(a, b, g), "f32[8,4]", "f32[2,4,3]", "s32[2]")
    add("scaled_dot", lambda a, b, sa, sb: lax.scaled_dot(a, b, lhs_scale=sa, rhs_scale=sb,
                                                          preferred_element_type=jnp.float32),
        "f8e4m3fn[4,32]", "f8e4m3fn[32,4]", "f8e8m0fnu[4,1]", "f8e8m0fnu[1,4]")

    family("fft")
    add("fft_c64", jnp.fft.fft, "c64[16]")
    add("fft_ifft_c64", jnp.fft.ifft, "c64[4,8]")
    add("fft_rfft_f32", jnp.fft.rfft, "f32[16]")
    add("fft_irfft_c64", lambda x: jnp.fft.irfft(x, n=16), "c64[9]")
    add("fft_fft2_c64", jnp.fft.fft2, "c64[2,8,8]")
    add("fft_fftn3d_c128", jnp.fft.fftn, "c128[4,4,4]")
    add("fft_rfft2_f32", jnp.fft.rfft2, "f32[8,8]")
    add("fft_irfftn3d", lambda x: jnp.fft.irfftn(x, s=(4, 4, 6)), "c64[4,4,4]")
    add("fft_rfft_f64", jnp.fft.rfft, "f64[8]")
    add("fft_fftshift_grad", jax.grad(lambda x: jnp.abs(jnp.fft.fftshift(jnp.fft.rfft(x))).sum()),
        "f32[16]")


def _cases_linalg() -> None:
    family("linalg")
    L = jnp.linalg
    add("linalg_cholesky", L.cholesky, "f32[4,4]")
    add("linalg_cholesky_f64_batched", L.cholesky, "f64[2,3,3]")
    add("linalg_triangular_solve_left_lower", lambda a, b: lax.linalg.triangular_solve(
        a, b, left_side=True, lower=True), "f32[4,4]", "f32[4,2]")
    add("linalg_triangular_solve_right_upper_t", lambda a, b: lax.linalg.triangular_solve(
        a, b, left_side=False, lower=False, transpose_a=True, unit_diagonal=True), "f32[4,4]",
        "f32[2,4]")
    add("linalg_qr", L.qr, "f32[5,3]")
    add("linalg_qr_c64", L.qr, "c64[3,3]")
    add("linalg_eigh", L.eigh, "f32[4,4]")
    add("linalg_eigh_c128", L.eigh, "c128[3,3]")
    add("linalg_svd", L.svd, "f32[5,3]")
    add("linalg_svd_novec_f64", lambda x: L.svd(x, compute_uv=False), "f64[4,4]")
    add("linalg_lu", lax.linalg.lu, "f32[4,4]")
    add("linalg_inv", L.inv, "f32[4,4]")
    add("linalg_det", L.det, "f32[3,3]")
    add("linalg_slogdet_f64", L.slogdet, "f64[3,3]")
    add("linalg_solve", L.solve, "f32[4,4]", "f32[4,2]")
    add("linalg_eig", L.eig, "f32[3,3]")
    add("linalg_pinv", L.pinv, "f32[4,3]")
    add("linalg_lstsq", lambda a, b: L.lstsq(a, b)[0], "f32[5,3]", "f32[5]")
    add("linalg_matrix_power", lambda x: L.matrix_power(x, 5), "f32[3,3]")
    add("linalg_expm", jax.scipy.linalg.expm, "f32[3,3]")
    add("linalg_schur", jax.scipy.linalg.schur, "f64[3,3]")
    add("linalg_hessenberg", lambda x: jax.scipy.linalg.hessenberg(x, calc_q=True), "f32[4,4]")
    add("linalg_tridiagonal_solve", lax.linalg.tridiagonal_solve, "f32[5]", "f32[5]", "f32[5]",
        "f32[5,1]")
    add("linalg_grad_cholesky_solve", jax.grad(lambda a, b: L.solve(a @ a.T + 4 * jnp.eye(3), b)
                                               .sum()), "f32[3,3]", "f32[3]")
    add("linalg_lu_pivots_to_permutation", lambda p: lax.linalg.lu_pivots_to_permutation(p, 5),
        "s32[3]")


def _cases_random() -> None:
    family("random")
    R = jax.random
    add("random_threefry_normal", lambda s: R.normal(R.key(s), (16,)), "s32[]")
    add("random_threefry_uniform_key_arg", lambda k: R.uniform(k, (4, 4), minval=-1.0),
        "u32[2]")
    add("random_threefry_split_fold_in", lambda k: R.bits(R.fold_in(R.split(k)[1], 7), (5,)),
        "u32[2]")
    add("random_threefry_bernoulli", lambda k: R.bernoulli(k, 0.3, (8,)), "u32[2]")
    add("random_threefry_categorical", lambda k, l: R.categorical(k, l), "u32[2]", "f32[4,10]")
    add("random_threefry_randint", lambda k: R.randint(k, (6,), 0, 100), "u32[2]")
    add("random_threefry_gamma", lambda k: R.gamma(k, 2.0, (4,)), "u32[2]")
    add("random_threefry_truncated_normal", lambda k: R.truncated_normal(k, -1.0, 1.0, (8,)),
        "u32[2]")
    add("random_threefry_choice", lambda k, x: R.choice(k, x, (3,), replace=False), "u32[2]",
        "f32[10]")
    add("random_threefry_dropout", lambda k, x: jnp.where(R.bernoulli(k, 0.9, x.shape), x / 0.9, 0),
        "u32[2]", "f32[4,4]")
    add("random_threefry_bf16_normal", lambda k: R.normal(k, (8,), dtype=jnp.bfloat16), "u32[2]")
    add("random_threefry_f64_uniform", lambda k: R.uniform(k, (8,), dtype=jnp.float64), "u32[2]",
        x64=True)
    for impl in ["rbg", "unsafe_rbg"]:
        add(f"random_{impl}_normal", lambda s, impl=impl: R.normal(R.key(s, impl=impl), (16,)),
            "s32[]")
        add(f"random_{impl}_uniform_split", lambda s, impl=impl: R.uniform(
            R.split(R.key(s, impl=impl))[0], (4, 4)), "s32[]")
        add(f"random_{impl}_config_bernoulli",
            lambda s: R.bernoulli(R.PRNGKey(s), 0.5, (10,)), "s32[]",
            config={"jax_default_prng_impl": impl})
        add(f"random_{impl}_config_categorical",
            lambda s, l: R.categorical(R.PRNGKey(s), l), "s32[]", "f32[3,5]",
            config={"jax_default_prng_impl": impl})
    for alg in ["RNG_DEFAULT", "RNG_THREE_FRY", "RNG_PHILOX"]:
        add(f"rng_bit_generator_{alg.lower()}", lambda k, alg=alg: lax.rng_bit_generator(
            k, (4, 4), jnp.uint32, getattr(lax.RandomAlgorithm, alg)), "u32[4]")
    add("rng_bit_generator_u64", lambda k: lax.rng_bit_generator(k, (8,), jnp.uint64), "u32[4]",
        x64=True)
    add("rng_uniform_stateful", lambda a: lax.rng_uniform(a, 1.0, (5,)), "f32[]")
    add("rng_uniform_s32", lambda: lax.rng_uniform(jnp.int32(0), jnp.int32(10), (5,)))


def _cases_control() -> None:
    family("control-flow")
    add("while_loop_scalar", lambda n: lax.while_loop(lambda i: i < n, lambda i: i * 2 + 1, 1),
        "s32[]")
    add("while_loop_tuple_carry", lambda x: lax.while_loop(
        lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 1.1, c[2].at[c[0] % 4].add(1.0)),
        (0, x, jnp.zeros(4))), "f32[3]")
    add("fori_loop_static", lambda x: lax.fori_loop(0, 5, lambda i, v: v + i * v, x), "f32[4]")
    add("fori_loop_dynamic", lambda x, n: lax.fori_loop(0, n, lambda i, v: jnp.sin(v), x),
        "f32[4]", "s32[]")
    add("scan_cumulative", lambda xs: lax.scan(lambda c, x: (c + x, c * x), 0.0, xs), "f32[10]")
    add("scan_rnn", lambda w, xs: lax.scan(lambda h, x: (jnp.tanh(w @ h + x),) * 2,
                                           jnp.zeros(4), xs), "f32[4,4]", "f32[6,4]", dump=True)
    add("scan_unroll2_reverse", lambda xs: lax.scan(lambda c, x: (c * 0.5 + x, c), 0.0, xs,
                                                    reverse=True, unroll=2), "f32[8]")
    add("scan_grad", jax.grad(lambda w, xs: lax.scan(lambda h, x: (jnp.tanh(w * h + x), None),
                                                     0.1, xs)[0]), "f32[]", "f32[7]")
    add("cond_simple", lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x), "pred[]", "f32[4]")
    add("cond_int_pred", lambda i, x: lax.cond(i > 2, lambda y: y * 2, lambda y: y - 1, x),
        "s32[]", "s32[3]")
    add("cond_tuple_operands", lambda p, a, b: lax.cond(
        p, lambda t: (t[1], t[0] + 1.0), lambda t: (t[1] * 2, t[0]), (a, b)), "pred[]", "f32[2]",
        "f32[2]")
    add("switch_3_branches", lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, lambda y: -y], x),
        "s32[]", "f32[4]")
    add("switch_grad", jax.grad(lambda x, i: lax.switch(i, [jnp.sin, jnp.exp, jnp.tanh], x)),
        "f32[]", "s32[]")
    add("lax_map", lambda xs: lax.map(lambda x: jnp.sum(x ** 2), xs), "f32[5,3]")
    add("nested_while_in_cond", lambda p, n: lax.cond(
        p, lambda m: lax.while_loop(lambda i: i < m, lambda i: i + 3, 0), lambda m: m, n),
        "pred[]", "s32[]")
    add("vmap_cond_to_select", jax.vmap(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x)), "pred[4]",
        "f32[4]")
    add("vmap_while", jax.vmap(lambda n: lax.while_loop(lambda i: i < n, lambda i: i + 1, 0)),
        "s32[5]")
    add("checkpoint_grad", jax.grad(lambda x: jax.checkpoint(
        lambda y: jnp.sin(jnp.sin(y)).sum())(x)), "f32[8]")
    add("checkpoint_policy_grad", jax.grad(lambda w, x: jax.checkpoint(
        lambda w, x: jnp.tanh(x @ w).sum(),
        policy=jax.checkpoint_policies.dots_saveable)(w, x)), "f32[4,4]", "f32[2,4]")
    add("optimization_barrier", lambda a, b: lax.optimization_barrier((a * 2, b + 1)), "f32[3]",
        "s32[3]")

    @jax.custom_jvp
    def softplus(x):
        return jnp.log1p(jnp.exp(x))

    softplus.defjvp(lambda p, t: (softplus(p[0]), t[0] * jax.nn.sigmoid(p[0])))

    @jax.custom_vjp
    def clip_grad(x):
        return x

    clip_grad.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1, 1),))
    add("custom_jvp_grad", jax.grad(lambda x: softplus(x).sum()), "f32[5]")
    add("custom_vjp_grad", jax.grad(lambda x: (clip_grad(x) ** 3).sum()), "f32[5]")
    add("nested_jit_call", lambda x: jax.jit(lambda y: jnp.sin(y) * 2)(x) +
        jax.jit(jnp.cos)(x), "f32[4]")
    add("named_call_scope", lambda x: jax.named_call(lambda y: y * 3, name="triple")(x) + 1,
        "f32[4]")
    add("composite", lambda x: lax.composite(lambda y, *, alpha: y * alpha + 1, name="my.axpb")(
        x, alpha=2.0), "f32[4]")
    add("platform_dependent", lambda x: lax.platform_dependent(
        x, cpu=lambda y: y * 2, default=lambda y: y * 3), "f32[4]")
    add("create_token_after_all", lambda x: (lax.after_all(lax.create_token(x),
                                                           lax.create_token(x)), x), "f32[2]")


def _mlp(params, x):
    for w, b in params:
        x = jax.nn.relu(x @ w + b)
    return x


def _layernorm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) * lax.rsqrt(v + 1e-5) * g + b


def _attention(q, k, v):
    s = jnp.einsum("bqd,bkd->bqk", q, k) / jnp.sqrt(q.shape[-1])
    mask = jnp.tril(jnp.ones((q.shape[1], k.shape[1]), bool))
    s = jnp.where(mask, s, -1e9)
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(s, -1), v)


def _transformer_block(p, x):
    h = _layernorm(x, p["ln1_g"], p["ln1_b"])
    B, T, D = x.shape
    H = 2
    qkv = h @ p["wqkv"]
    q, k, v = jnp.split(qkv, 3, -1)

    def heads(t):
        return t.reshape(B, T, H, D // H).transpose(0, 2, 1, 3).reshape(B * H, T, D // H)

    a = _attention(heads(q), heads(k), heads(v))
    a = a.reshape(B, H, T, D // H).transpose(0, 2, 1, 3).reshape(B, T, D)
    x = x + a @ p["wo"]
    h = _layernorm(x, p["ln2_g"], p["ln2_b"])
    return x + jax.nn.gelu(h @ p["w1"]) @ p["w2"]


def _tb_params(D=16, F=32, dtype=jnp.float32):
    S = jax.ShapeDtypeStruct
    return {"ln1_g": S((D,), dtype), "ln1_b": S((D,), dtype), "wqkv": S((D, 3 * D), dtype),
            "wo": S((D, D), dtype), "ln2_g": S((D,), dtype), "ln2_b": S((D,), dtype),
            "w1": S((D, F), dtype), "w2": S((F, D), dtype)}


def _cases_nn() -> None:
    family("nn/models")
    S = jax.ShapeDtypeStruct
    f32 = jnp.float32
    mlp_params = lambda: [[(S((8, 16), f32), S((16,), f32)), (S((16, 4), f32), S((4,), f32))],
                          S((5, 8), f32), S((5, 4), f32)]

    def mlp_loss(p, x, y):
        return ((_mlp(p, x) - y) ** 2).mean()

    add("mlp_forward", lambda p, x, y: _mlp(p, x), mlp_params)
    add("grad_mlp", jax.grad(mlp_loss), mlp_params, dump=True)

    def sgd_step(p, x, y):
        loss, g = jax.value_and_grad(mlp_loss)(p, x, y)
        return jax.tree.map(lambda a, b: a - 0.1 * b, p, g), loss

    add("train_step_mlp_donated", sgd_step, mlp_params, jit={"donate_argnums": (0,)})

    def cnn(p, x):
        dn = ("NHWC", "HWIO", "NHWC")
        x = jax.nn.relu(lax.conv_general_dilated(x, p[0], (1, 1), "SAME", dimension_numbers=dn))
        x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        x = jax.nn.relu(lax.conv_general_dilated(x, p[1], (2, 2), "SAME", dimension_numbers=dn))
        x = x.reshape(x.shape[0], -1) @ p[2]
        return jax.nn.log_softmax(x)

    cnn_args = lambda: [(S((3, 3, 1, 4), f32), S((3, 3, 4, 8), f32), S((32, 10), f32)),
                        S((2, 8, 8, 1), f32), S((2,), jnp.int32)]
    add("grad_cnn", jax.grad(lambda p, x, y: -jnp.take_along_axis(
        cnn(p, x), y[:, None], 1).mean()), cnn_args, dump=True)
    add("attention_forward", _attention, "f32[2,6,8]", "f32[2,6,8]", "f32[2,6,8]")
    add("grad_attention", jax.grad(lambda q, k, v: _attention(q, k, v).sum(), argnums=(0, 1, 2)),
        "f32[2,6,8]", "f32[2,6,8]", "f32[2,6,8]", dump=True)
    add("nn_dot_product_attention", lambda q, k, v: jax.nn.dot_product_attention(
        q, k, v, is_causal=True), "f32[2,6,2,8]", "f32[2,6,2,8]", "f32[2,6,2,8]")
    add("grad_layernorm", jax.grad(lambda x, g, b: _layernorm(x, g, b).sum(), argnums=(0, 1, 2)),
        "f32[4,16]", "f32[16]", "f32[16]")
    add("grad_softmax", jax.grad(lambda x: jax.nn.softmax(x)[..., 0].sum()), "f32[3,7]")
    add("transformer_block_forward", _transformer_block, lambda: [_tb_params(), S((2, 8, 16), f32)])
    add("grad_transformer_block", jax.grad(lambda p, x: _transformer_block(p, x).mean()),
        lambda: [_tb_params(), S((2, 8, 16), f32)], dump=True)
    add("transformer_block_bf16", _transformer_block,
        lambda: [_tb_params(dtype=jnp.bfloat16), S((2, 8, 16), jnp.bfloat16)])
    nn = jax.nn
    for n, f in [("relu", nn.relu), ("relu6", nn.relu6), ("gelu_tanh", partial(nn.gelu, approximate=True)),
                 ("gelu_exact", partial(nn.gelu, approximate=False)), ("silu", nn.silu),
                 ("softplus", nn.softplus), ("log_softmax", nn.log_softmax), ("elu", nn.elu),
                 ("celu", nn.celu), ("selu", nn.selu), ("sigmoid", nn.sigmoid),
                 ("hard_tanh", nn.hard_tanh), ("glu", nn.glu), ("leaky_relu", nn.leaky_relu),
                 ("standardize", nn.standardize), ("log_sigmoid", nn.log_sigmoid),
                 ("mish", nn.mish), ("sparse_plus", nn.sparse_plus)]:
        add(f"nn_{n}", f, "f32[4,6]")
    add("nn_grad_gelu_bf16", jax.grad(lambda x: nn.gelu(x).sum()), "bf16[8]")
    add("hessian_small", jax.hessian(lambda x: (jnp.sin(x) * x ** 2).sum()), "f32[3]")
    add("jacfwd_vmap", jax.jacfwd(lambda x: jnp.tanh(x) @ jnp.ones((3, 2))), "f32[3]")


def _cases_collectives() -> None:
    family("collectives/sharding")
    f32 = "f32[64,4]"
    X = sh(f32, "x")
    add("smap_psum", smap(lambda x: lax.psum(x, "x"), P("x"), P("x")), X, dump=True)
    add("smap_pmean_pmax_pmin", smap(lambda x: (lax.pmean(x, "x"), lax.pmax(x, "x"),
                                                lax.pmin(x, "x")), P("x"), P("x")), X)
    add("smap_psum_s32", smap(lambda x: lax.psum(x, "x"), P("x"), P("x")), sh("s32[16]", "x"))
    add("smap_all_gather", smap(lambda x: lax.all_gather(x, "x"), P("x"), P("x")), X)
    add("smap_all_gather_tiled", smap(lambda x: lax.all_gather(x, "x", axis=1, tiled=True),
                                      P("x"), P("x")), X)
    add("smap_psum_scatter", smap(lambda x: lax.psum_scatter(x, "x", tiled=True), P("x"),
                                  P("x")), X)
    add("smap_all_to_all", smap(lambda x: lax.all_to_all(x, "x", 0, 0, tiled=True), P("x"),
                                P("x")), X)
    add("smap_all_to_all_split1", smap(lambda x: lax.all_to_all(x, "x", 1, 0, tiled=True), P("x"),
                                       P("x")), sh("f32[64,16]", "x"))
    add("smap_ppermute_ring", smap(lambda x: lax.ppermute(
        x, "x", [(i, (i + 1) % 8) for i in range(8)]), P("x"), P("x")), X)
    add("smap_pshuffle", smap(lambda x: lax.pshuffle(x, "x", [7, 6, 5, 4, 3, 2, 1, 0]), P("x"),
                              P("x")), X)
    add("smap_axis_index", smap(lambda x: x + lax.axis_index("x"), P("x"), P("x")),
        sh("s32[8]", "x"))
    # collective-broadcast / send / recv have no XLA:CPU lowering: lower for CUDA (before text only)
    add("smap_pbroadcast_cuda", smap(lambda x: lax.pbroadcast(x, "x", 0), P("x"), P("x")), X,
        platforms=("cuda",))
    add("smap_ragged_all_to_all", smap(
        lambda op, out, io, ss, oo, rs: lax.ragged_all_to_all(op, out, io, ss, oo, rs,
                                                              axis_name="x"),
        P("x"), P("x")), sh("f32[128]", "x"), sh("f32[128]", "x"), sh("s32[64]", "x"),
        sh("s32[64]", "x"), sh("s32[64]", "x"), sh("s32[64]", "x"))
    perm = [(i, (i + 1) % 8) for i in range(8)]
    add("smap_psend_precv_cuda", smap(lambda x: lax.precv(
        lax.psend(x, "x", perm), jax.ShapeDtypeStruct(x.shape, x.dtype), "x", perm), P("x"),
        P("x")), X, platforms=("cuda",))
    add("smap_psum_multiplatform_cpu_cuda", smap(lambda x: lax.psum(jnp.sin(x), "x"), P("x"),
                                                 P("x")), X, platforms=("cpu", "cuda"))
    # the same kind of programs with the GSPMD partitioner instead of Shardy
    gspmd = {"jax_use_shardy_partitioner": False}
    add("gspmd_smap_psum", smap(lambda x: lax.psum(x, "x"), P("x"), P("x")), X, config=gspmd)
    add("gspmd_smap_all_to_all", smap(lambda x: lax.all_to_all(x, "x", 0, 0, tiled=True), P("x"),
                                      P("x")), X, config=gspmd)
    add("gspmd_jit_sharded_matmul", lambda x, w: x @ w, sh("f32[16,32]", "x", None),
        sh("f32[32,16]", None, "x"), jit={"out_shardings": NamedSharding(MESH, P())},
        config=gspmd)
    add("gspmd_jit_sharded_2d_constraint", lambda x: lax.with_sharding_constraint(
        x * 2, NamedSharding(MESH2, P("model", "data"))), sh("f32[8,8]", "data", "model",
                                                            mesh=MESH2), config=gspmd)
    add("gspmd_pmap_psum", lambda x: lax.psum(x, "i"), "f32[8,4]", lower=_pmap_lower,
        config=gspmd)
    add("smap_psum_2d_mesh", smap(lambda x: lax.psum(x, "model"), P("data", "model"),
                                  P("data", "model"), mesh=MESH2),
        sh("f32[8,4]", "data", "model", mesh=MESH2))
    add("smap_psum_tuple_axes", smap(lambda x: lax.psum(x, ("data", "model")),
                                     P("data", "model"), P("data", "model"), mesh=MESH2),
        sh("f32[8,4]", "data", "model", mesh=MESH2))
    add("smap_psum_grad", jax.grad(smap(lambda x: lax.psum((x ** 2).sum(), "x"), P("x"), P())),
        X)
    add("pmap_psum", lambda x: lax.psum(x, "i"), "f32[8,4]", lower=_pmap_lower)
    add("pmap_axis_index_ppermute", lambda x: lax.ppermute(x * lax.axis_index("i"), "i",
                                                           perm), "f32[8,4]", lower=_pmap_lower)
    add("pmap_all_gather", lambda x: lax.all_gather(x, "i"), "f32[8,3]", lower=_pmap_lower)
    # sharded jit: the SPMD partitioner inserts collectives in the optimized module
    add("jit_sharded_matmul", lambda x, w: x @ w, sh("f32[16,32]", "x", None),
        sh("f32[32,16]", None, "x"), jit={"out_shardings": NamedSharding(MESH, P())}, dump=True)
    add("jit_sharded_contracting", lambda x, w: x @ w, sh("f32[16,32]", None, "x"),
        sh("f32[32,16]", "x", None))
    add("jit_sharded_reduce", lambda x: x.sum(0), sh("f32[64,8]", "x"))
    add("jit_sharding_constraint", lambda x: lax.with_sharding_constraint(
        jnp.sin(x), NamedSharding(MESH, P(None, "x"))).T, sh("f32[16,16]", "x"))
    add("jit_sharded_2d_mlp", lambda x, w1, w2: jax.nn.relu(x @ w1) @ w2,
        sh("f32[8,16]", "data", None, mesh=MESH2), sh("f32[16,32]", None, "model", mesh=MESH2),
        sh("f32[32,16]", "model", None, mesh=MESH2))
    add("jit_sharded_replicated_out", lambda x: jnp.cumsum(x), sh("f32[64]", "x"),
        jit={"out_shardings": NamedSharding(MESH, P())})
    add("jit_sharded_grad_mlp", jax.grad(lambda w, x: jnp.tanh(x @ w).sum()),
        sh("f32[8,8]", None, "x"), sh("f32[16,8]", "x", None))


def _cases_foreign() -> None:
    family("other-platform lowering")
    # HLO that JAX emits only when lowering for GPU/TPU (no compile here: before text only)
    L = jnp.linalg
    add("tpu_linalg_cholesky", L.cholesky, "f32[4,4]", platforms=("tpu",))
    add("tpu_linalg_triangular_solve", lambda a, b: lax.linalg.triangular_solve(
        a, b, left_side=True, lower=True, transpose_a=True), "f32[4,4]", "f32[4,2]",
        platforms=("tpu",))
    add("cuda_linalg_triangular_solve_c64", lambda a, b: lax.linalg.triangular_solve(
        a, b, left_side=False, lower=False, conjugate_a=True), "c64[3,3]", "c64[2,3]",
        platforms=("cuda",))
    add("tpu_linalg_qr", L.qr, "f32[5,3]", platforms=("tpu",))
    add("tpu_linalg_eigh", L.eigh, "f32[4,4]", platforms=("tpu",))
    add("tpu_linalg_svd", L.svd, "f32[4,3]", platforms=("tpu",))
    add("tpu_linalg_lu", lax.linalg.lu, "f32[4,4]", platforms=("tpu",))
    add("cuda_linalg_cholesky", L.cholesky, "f32[4,4]", platforms=("cuda",))
    add("cuda_linalg_eigh", L.eigh, "f32[4,4]", platforms=("cuda",))
    add("tpu_approx_max_k", lambda x: lax.approx_max_k(x, 4), "f32[4,128]", platforms=("tpu",))
    add("tpu_random_normal", lambda k: jax.random.normal(k, (8,)), "u32[2]", platforms=("tpu",))
    add("cuda_dot_product_attention_xla", lambda q, k, v: jax.nn.dot_product_attention(
        q, k, v, implementation="xla"), "f16[2,8,2,16]", "f16[2,8,2,16]", "f16[2,8,2,16]",
        platforms=("cuda",))
    add("tpu_ragged_dot", lambda a, b, g: lax.ragged_dot(a, b, g), "f32[8,4]", "f32[2,4,3]",
        "s32[2]", platforms=("tpu",))
    add("cuda_ragged_dot_bf16", lambda a, b, g: lax.ragged_dot(
        a, b, g, preferred_element_type=jnp.float32), "bf16[16,8]", "bf16[4,8,6]", "s32[4]",
        platforms=("cuda",))
    add("cuda_grad_transformer_block", jax.grad(lambda p, x: _transformer_block(p, x).mean()),
        lambda: [_tb_params(), jax.ShapeDtypeStruct((2, 8, 16), jnp.float32)],
        platforms=("cuda",))


def build_cases() -> None:
    if CASES:
        return
    _cases_elementwise()
    _cases_convert()
    _cases_shape()
    _cases_gather_scatter()
    _cases_sort()
    _cases_reduce()
    _cases_conv_dot()
    _cases_linalg()
    _cases_random()
    _cases_control()
    _cases_nn()
    _cases_collectives()
    _cases_foreign()
    # a few more programs whose XLA dumps we keep
    for n in ["sort_multi_operand_numkeys2", "random_threefry_normal", "fft_rfft2_f32",
              "linalg_qr", "while_loop_tuple_carry"]:
        CASES[n].dump = True


# --------------------------------------------------------------------------------------------------
# driver

_INSTR_RE = re.compile(r"^\s*(?:ROOT\s+)?%?[^\s=]+\s*=\s*(.*)$")
_OPNAME_RE = re.compile(r"([a-z][a-z0-9\-]*)\(")
_OPSET = set(XLA_OPCODES)


def opcodes_in(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        m = _INSTR_RE.match(line)
        if not m:
            continue
        for om in _OPNAME_RE.finditer(m.group(1)):
            if om.group(1) in _OPSET:
                out.append(om.group(1))
                break
    return out


def xla_accepts(text: str) -> Optional[str]:
    """None if XLA's own HLO parser accepts `text`, else its error message."""
    from jaxlib import _hlo
    try:
        _hlo.hlo_module_from_text(text)
        return None
    except Exception as e:  # noqa: BLE001
        return str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__


def _dump_child(name: str) -> int:
    build_cases()
    lower_case(CASES[name])
    return 0


def run_dumps(names: list[str], dump_out: Path, log) -> list[str]:
    written = []
    dump_out.mkdir(parents=True, exist_ok=True)
    for name in names:
        with tempfile.TemporaryDirectory(prefix="hlo_dump_") as d:
            env = dict(os.environ)
            env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + f" --xla_dump_to={d}").strip()
            r = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--_dump-child",
                                name], env=env, capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                log(f"WARNING: dump of {name} failed: {r.stderr.strip().splitlines()[-1:]}")
                continue
            for f in sorted(Path(d).iterdir()):
                if f"jit_{name}." not in f.name:
                    continue
                if not (f.name.endswith(".before_optimizations.txt")
                        or f.name.endswith("after_optimizations.txt")):
                    continue
                size = f.stat().st_size
                if size > MAX_DUMP:
                    log(f"WARNING: skipping dump {f.name} ({size} bytes > {MAX_DUMP})")
                    continue
                err = xla_accepts(f.read_text())
                if err:
                    log(f"WARNING: XLA rejects its own dump {f.name}: {err}")
                    continue
                # module_0001.jit_grad_mlp.cpu_after_optimizations.txt -> keep name, drop counter
                short = re.sub(r"^module_\d+\.", "", f.name)
                shutil.copyfile(f, dump_out / short)
                written.append(short)
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--only", help="regex: only cases whose name matches")
    ap.add_argument("--no-dumps", action="store_true", help="skip the --xla_dump_to subprocesses")
    ap.add_argument("--list", action="store_true", help="list the case names and exit")
    ap.add_argument("--keep", action="store_true",
                    help="do not delete existing corpus files before writing")
    ap.add_argument("--_dump-child", dest="dump_child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.dump_child:
        return _dump_child(a.dump_child)

    build_cases()
    names = [n for n in CASES if not a.only or re.search(a.only, n)]
    if a.list:
        for n in names:
            print(f"{CASES[n].family:28s} {n}")
        return 0

    t0 = time.time()
    out: Path = a.out
    out.mkdir(parents=True, exist_ok=True)
    if not a.keep and not a.only:
        for f in list(out.glob("*.hlo")) + list((out / "dumps").glob("*.txt")):
            f.unlink()
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    failed: dict[str, str] = {}
    rejected: dict[str, str] = {}
    before_only: dict[str, str] = {}
    too_big: list[str] = []
    written: list[str] = []
    for i, n in enumerate(names):
        c = CASES[n]
        try:
            before, after, after_err = lower_case(c)
        except Exception as e:  # noqa: BLE001
            log(f"WARNING: case {n} failed: {_short_err(e)}")
            failed[n] = _short_err(e)
            if os.environ.get("MAKE_CORPUS_TRACEBACK"):
                traceback.print_exc()
            continue
        if after_err:
            before_only[n] = after_err
            if not c.platforms:
                log(f"WARNING: case {n}: compile failed, writing before text only: {after_err}")
        for kind, text in (("before", before), ("after", after)):
            if text is None:
                continue
            fname = f"{n}.{kind}.hlo"
            if len(text.encode()) > MAX_FILE:
                log(f"WARNING: {fname} is {len(text.encode())} bytes; skipped")
                too_big.append(fname)
                continue
            err = xla_accepts(text)
            if err:
                log(f"WARNING: XLA's parser rejects its own {fname}: {err}")
                rejected[fname] = err
                continue
            (out / fname).write_text(text)
            written.append(fname)
        if (i + 1) % 50 == 0:
            log(f"... {i + 1}/{len(names)} cases ({time.time() - t0:.0f}s)")

    dumps: list[str] = []
    if not a.no_dumps:
        dump_names = [n for n in names if CASES[n].dump and n not in failed
                      and n not in before_only]
        dumps = run_dumps(dump_names, out / "dumps", log)

    elapsed = time.time() - t0
    files = sorted(out.glob("*.hlo")) + sorted((out / "dumps").glob("*.txt"))
    total = sum(f.stat().st_size for f in files)
    counts: dict[str, int] = {}
    for f in files:
        for op in opcodes_in(f.read_text()):
            counts[op] = counts.get(op, 0) + 1
    if not a.only:
        manifest = {
            "generator": "tools/make_corpus.py",
            "jax": jax.__version__,
            "jaxlib": getattr(__import__("jaxlib"), "__version__", "?"),
            "cases": {n: CASES[n].family for n in names if n not in failed},
            "failed": failed, "before_only": before_only, "rejected_by_xla_parser": rejected, "skipped_too_big": too_big,
            "dumps": dumps,
        }
        (out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    print(f"cases: {len(names) - len(failed)} ok ({len(before_only)} before-only), "
          f"{len(failed)} failed; files written: {len(written)} + "
          f"{len(dumps)} dumps; corpus now {len(files)} files, {total / 1e6:.2f} MB; "
          f"{elapsed:.0f}s")
    print("opcodes seen:", " ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    print("XLA opcodes absent:", " ".join(o for o in XLA_OPCODES if o not in counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
