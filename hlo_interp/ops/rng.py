"""Random numbers: rng-bit-generator, rng (uniform / normal), rng-get-and-update-state.

rng-bit-generator is bit-exact with XLA:CPU (checked through jaxlib 0.10.2, see
tests/test_ops_fft_linalg_rng.py).  XLA expands it (RngBitGeneratorExpander + the bit generators of
its client library, prng.cc); this module computes the same bits with vectorized uint32/uint64 NumPy:

  * state[0] is the 64-bit key, split into two 32-bit words (low word first).
  * rng_three_fry (state u64[2]): counter c = state[1].  Threefry-2x32, 20 rounds.
      - 64-bit outputs: element i (row-major) = threefry(c + i) as (x0 | x1 << 32); new state
        [key, c + N].
      - 32-bit outputs: the shape is halved along its first even dimension (else its largest, the
        first of equal ones; a scalar counts as [1]); half element k gets counter c + k, and its two
        output words fill positions 2k and 2k+1 of that dimension (the last dropped when the
        dimension is odd).  New state [key, c + elements(half shape)].
      - narrower outputs (8/16 bits and sub-byte): the 32-bit result, truncated to the low bits.
  * rng_philox: Philox-4x32, 10 rounds, with a 128-bit counter: for a u64[2] state the counter is
    (low = state[1], high = state[0]) and the new state [key, new counter low]; for u64[3] it
    is (low = state[1], high = state[2]) and the new state [key, low, high].
      - 32-bit outputs: ceil(N/4) counters c, c+1, ...; block j gives 4 words that fill elements
        4j..4j+3; new counter c + ceil(N/4).  Narrower outputs truncate the 32-bit words.
      - 64-bit outputs: ceil(N/2) counters; block j gives (w0 | w1 << 32, w2 | w3 << 32) for
        elements 2j, 2j+1; new counter c + ceil(N/2).
  * rng_default: XLA:CPU uses Philox (checked: identical bits and state to rng_philox).
  Output element types: unsigned and signed integers of 2 to 64 bits and every float type (the bits
  reinterpreted: f8/f4 take the low bits of the 32-bit words); pred, 1-bit types and complex are
  refused, as in XLA.

rng (distribution=rng_uniform / rng_normal): implementation-defined in XLA.  XLA:CPU expands it
(RngExpander) into Philox bits keyed by (a per-module random value) XOR (a process-wide random
value, or the module config's seed), so the key depends on what the process compiled before; the
counter comes from rng-get-and-update-state (delta = the number of 32-bit words of the result).  This
evaluator follows that recipe with the key XLA:CPU used for the first module compiled in a fresh JAX
process (RNG_KEY = 0xBAA1723EBDE0C74F, read off XLA's optimized text), so its values equal XLA:CPU's
in that situation (checked) and are deterministic everywhere:
  * uniform floats: the top mantissa bits of each Philox word scaled to [0, 1), then
    `u * (b - a) + a`; f16/bf16 are drawn in f32 and rounded, as XLA does;
  * uniform s32/u32/s64/u64: `a + (bits mod (b - a))` with unsigned wrap-around (XLA's formula;
    b == a gives a + bits, XLA's remainder by zero);
  * normal (f16/bf16/f32/f64): Box-Muller on pairs of uniforms u0, u1 drawn along the first even
    dimension (u0 = max(u0, 1e-7); z = (sin(2πu1)·r, cos(2πu1)·r), r = sqrt(-2 ln u0)), then
    mu + sigma·z.  Transcendentals are NumPy's, so normal values agree with XLA's to a few ulps.
  XLA:CPU fuses `u * (b - a) + a` and `mu + sigma·z` into FMAs in f32; so does this evaluator
  (exact product in f64, one rounding).
rng-get-and-update-state: a 128-bit counter (u64[2], low word first) per module object, starting at
XLA:CPU's 0x7012395 and advanced by `delta` each time it executes (XLA keeps one per executable).
"""
from __future__ import annotations

import math

import numpy as np

from .registry import error_at, kernel, unsupported

_M32 = np.uint64(0xFFFFFFFF)
_ROT = (13, 15, 26, 6, 17, 29, 16, 24)


def _rotl(v: np.ndarray, d: int) -> np.ndarray:
    return (v << np.uint32(d)) | (v >> np.uint32(32 - d))


def threefry2x32(x0: np.ndarray, x1: np.ndarray, k0: int, k1: int) -> tuple[np.ndarray, np.ndarray]:
    """Threefry-2x32 with 20 rounds on uint32 arrays (counter words x0, x1; key words k0, k1)."""
    ks = (np.uint32(k0), np.uint32(k1), np.uint32(0x1BD11BDA ^ k0 ^ k1))
    x0 = x0.astype(np.uint32) + ks[0]
    x1 = x1.astype(np.uint32) + ks[1]
    for block in range(5):
        rots = _ROT[:4] if block % 2 == 0 else _ROT[4:]
        for r in rots:
            x0 = x0 + x1
            x1 = _rotl(x1, r)
            x1 = x0 ^ x1
        x0 = x0 + ks[(block + 1) % 3]
        x1 = x1 + ks[(block + 2) % 3] + np.uint32(block + 1)
    return x0, x1


_PHILOX_W = (0x9E3779B9, 0xBB67AE85)
_PHILOX_M = (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57))


def philox4x32(x: list[np.ndarray], k0: int, k1: int) -> list[np.ndarray]:
    """Philox-4x32 with 10 rounds on four uint32 arrays; key words k0, k1."""
    k = [int(k0) & 0xFFFFFFFF, int(k1) & 0xFFFFFFFF]
    x = [v.astype(np.uint32) for v in x]
    for _ in range(10):
        p0 = x[0].astype(np.uint64) * _PHILOX_M[0]
        p1 = x[2].astype(np.uint64) * _PHILOX_M[1]
        x = [(p1 >> np.uint64(32)).astype(np.uint32) ^ x[1] ^ np.uint32(k[0]), (p1 & _M32).astype(np.uint32),
             (p0 >> np.uint64(32)).astype(np.uint32) ^ x[3] ^ np.uint32(k[1]), (p0 & _M32).astype(np.uint32)]
        k = [(k[0] + _PHILOX_W[0]) & 0xFFFFFFFF, (k[1] + _PHILOX_W[1]) & 0xFFFFFFFF]
    return x


def _split64(v: int) -> tuple[int, int]:
    v = int(v) & 0xFFFFFFFFFFFFFFFF
    return v & 0xFFFFFFFF, v >> 32


def _halves(dims: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
    """XLA's SplitShapeIntoHalves: the split dimension and the half shape (a scalar counts as [1])."""
    if not dims:
        return 0, (1,)
    split = next((i for i, d in enumerate(dims) if d % 2 == 0), None)
    if split is None:
        split = max(range(len(dims)), key=lambda i: (dims[i], -i))
    half = list(dims)
    half[split] = (dims[split] + 1) // 2
    return split, tuple(half)


def _counter_words(c: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Low and high uint32 words of (c + i) mod 2**64 for i in [0, n)."""
    v = np.arange(n, dtype=np.uint64) + np.uint64(int(c) & 0xFFFFFFFFFFFFFFFF)
    return (v & _M32).astype(np.uint32), (v >> np.uint64(32)).astype(np.uint32)


def three_fry_bits(key: int, counter: int, dims: tuple[int, ...], bits: int) -> tuple[np.ndarray, int]:
    """(random words of `bits` width as uint32/uint64 of shape dims, new counter)."""
    k0, k1 = _split64(key)
    n = math.prod(dims)
    if bits == 64:
        lo, hi = _counter_words(counter, n)
        y0, y1 = threefry2x32(lo, hi, k0, k1)
        out = y0.astype(np.uint64) | (y1.astype(np.uint64) << np.uint64(32))
        return out.reshape(dims), (counter + n) & 0xFFFFFFFFFFFFFFFF
    split, half = _halves(dims)
    nh = math.prod(half)
    lo, hi = _counter_words(counter, nh)
    y0, y1 = threefry2x32(lo, hi, k0, k1)
    pair = np.stack([y0.reshape(half), y1.reshape(half)], axis=split + 1)  # [.., h, 2, ..]
    full = list(half)
    full[split] = 2 * half[split]
    out = pair.reshape(full)
    if not dims:
        out = out.reshape(-1)[:1].reshape(())
    elif full[split] != dims[split]:
        out = np.take(out, np.arange(dims[split]), axis=split)
    return out, (counter + nh) & 0xFFFFFFFFFFFFFFFF


def philox_bits(key: int, ctr_lo: int, ctr_hi: int, dims: tuple[int, ...], bits: int
                ) -> tuple[np.ndarray, int, int]:
    """(random words as uint32/uint64 of shape dims, new counter low, new counter high)."""
    k0, k1 = _split64(key)
    n = math.prod(dims)
    blocks = (n + 1) // 2 if bits == 64 else (n + 3) // 4
    base = np.uint64(int(ctr_lo) & 0xFFFFFFFFFFFFFFFF)
    lo = np.arange(blocks, dtype=np.uint64) + base
    hi = np.full(blocks, int(ctr_hi) & 0xFFFFFFFFFFFFFFFF, np.uint64) + (lo < base).astype(np.uint64)
    words = [(lo & _M32).astype(np.uint32), (lo >> np.uint64(32)).astype(np.uint32),
             (hi & _M32).astype(np.uint32), (hi >> np.uint64(32)).astype(np.uint32)]
    y = philox4x32(words, k0, k1)
    if bits == 64:
        w = [y[0].astype(np.uint64) | (y[1].astype(np.uint64) << np.uint64(32)),
             y[2].astype(np.uint64) | (y[3].astype(np.uint64) << np.uint64(32))]
        out = np.stack(w, axis=1).reshape(-1)[:n]
    else:
        out = np.stack(y, axis=1).reshape(-1)[:n]
    total = (int(ctr_lo) & 0xFFFFFFFFFFFFFFFF) + blocks
    new_lo = total & 0xFFFFFFFFFFFFFFFF
    new_hi = (int(ctr_hi) + (total >> 64)) & 0xFFFFFFFFFFFFFFFF
    return out.reshape(dims), new_lo, new_hi


def _as_type(words: np.ndarray, dtype: np.dtype, bits: int) -> np.ndarray:
    """Random words (uint32/uint64) -> the output element type: low bits kept, then reinterpreted."""
    dtype = np.dtype(dtype)
    if bits in (32, 64):
        return words.view(dtype) if words.dtype.itemsize == dtype.itemsize else words.astype(dtype)
    low = words & np.uint32((1 << bits) - 1)
    if dtype.kind == "f" or (dtype.kind == "V" and "float" in dtype.name):  # bf16/f16/f8/f4: the bits
        return low.astype({1: np.uint8, 2: np.uint16}[dtype.itemsize]).view(dtype)
    if dtype.kind == "u" or (dtype.kind == "V" and "uint" in dtype.name):
        return low.astype(np.uint64).astype(dtype) if dtype.kind == "V" else low.astype(dtype)
    # signed: reinterpret the low `bits` bits as two's complement
    sv = low.astype(np.int64) - ((low.astype(np.int64) >> (bits - 1)) & 1) * (1 << bits)
    return sv.astype(dtype)


def rng_bit_generator(state: np.ndarray, algorithm: str, dims: tuple[int, ...], dtype, bits: int
                      ) -> tuple[np.ndarray, np.ndarray]:
    """XLA's RngBitGenerator: (new state, random values of shape dims and element type dtype)."""
    st = [int(v) for v in np.asarray(state).reshape(-1).astype(np.uint64)]
    wbits = 64 if bits == 64 else 32
    if algorithm == "rng_three_fry":
        words, c = three_fry_bits(st[0], st[1], dims, wbits)
        new = np.array([st[0], c] + st[2:], np.uint64)
    else:  # philox (and rng_default on XLA:CPU)
        if len(st) >= 3:
            words, lo, hi = philox_bits(st[0], st[1], st[2], dims, wbits)
            new = np.array([st[0], lo, hi], np.uint64)
        else:
            words, lo, _ = philox_bits(st[0], st[1], st[0], dims, wbits)
            new = np.array([st[0], lo], np.uint64)
    return new.astype(np.asarray(state).dtype), _as_type(words, dtype, bits)


@kernel("rng-bit-generator")
def _k_rng_bit_generator(ins, ctx):
    alg = ins.attrs.get("algorithm", "rng_default")
    if alg not in ("rng_default", "rng_three_fry", "rng_philox"):
        raise unsupported(ins, f"algorithm {alg}")
    sh = ins.shape
    values_only = sh is not None and not sh.is_tuple and not sh.is_token  # XLA:CPU: the tuple form's values
    if not values_only and (sh is None or not sh.is_tuple or len(sh.elements) != 2 or sh.elements[1].is_tuple):
        raise error_at(ins, "rng-bit-generator needs a (state, values) tuple or a values array result shape")
    out = sh if values_only else sh.elements[1]
    et = out.element_type
    if et.kind not in ("sint", "uint", "float") or et.bits > 64 or et.bits < 2:
        raise unsupported(ins, f"output element type {et.name} (XLA supports 2- to 64-bit integers and floats)")
    dims = tuple(out.dims)
    dtype, bits = et.dtype, et.bits
    (state_shape,) = ctx.operand_shapes(ins)
    if state_shape.is_tuple or state_shape.element_type.name not in ("u64", "s64") or len(state_shape.dims) != 1:
        raise error_at(ins, "rng-bit-generator: the state must be a u64 vector")
    need = 2 if alg == "rng_three_fry" else (2 if state_shape.dims[0] < 3 else 3)
    if state_shape.dims[0] < need or (alg != "rng_three_fry" and state_shape.dims[0] > 3):
        raise error_at(ins, f"rng-bit-generator: {alg} needs a u64[{need}]" +
                       ("" if alg == "rng_three_fry" else " or u64[3]") + " state")
    if alg == "rng_three_fry" and state_shape.dims[0] != 2:
        raise error_at(ins, "rng-bit-generator: rng_three_fry needs a u64[2] state")
    ctx.check_alloc(ins, out)

    def run(state):
        r = rng_bit_generator(state, alg, dims, dtype, bits)
        return r[1] if values_only else r
    return run


# --------------------------------------------------------------------------------------------------
# rng-get-and-update-state and rng

class _RngState:
    """The module's 128-bit rng state (rng-get-and-update-state), one per compiled module."""
    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = RNG_STATE0

    def get_and_add(self, delta: int) -> np.ndarray:
        v = self.value
        self.value = (v + int(delta)) % (1 << 128)
        return np.array([v & 0xFFFFFFFFFFFFFFFF, v >> 64], np.uint64)


def module_state(ctx) -> _RngState:
    """The module's rng state (the counter rng-get-and-update-state advances), made on first use."""
    st = ctx.module.__dict__.get("_hlo_interp_rng_state")
    if st is None:
        st = ctx.module.__dict__["_hlo_interp_rng_state"] = _RngState()
    return st


@kernel("rng-get-and-update-state")
def _k_rng_get_and_update_state(ins, ctx):
    delta = int(ins.attrs.get("delta", 0))
    st = module_state(ctx)
    sh = ins.shape
    if sh is None or sh.is_tuple or sh.element_type.name != "u64" or tuple(sh.dims) != (2,):
        raise error_at(ins, "rng-get-and-update-state has the shape u64[2]")

    def run():
        return st.get_and_add(delta)
    return run


RNG_KEY = 0xBAA1723EBDE0C74F  # the key XLA:CPU used in a fresh JAX process (see above)
RNG_STATE0 = 0x7012395  # XLA:CPU's initial rng state


def uniform_from_bits(words: np.ndarray, a, b, dtype) -> np.ndarray:
    """XLA's ConvertRandomBitsToUniformFloatingPoint (f32 from u32 words, f64 from u64 words)."""
    dtype = np.dtype(dtype)
    mant = 23 if dtype == np.float32 else 52
    nbits = 32 if dtype == np.float32 else 64
    u = (words >> words.dtype.type(nbits - mant)).astype(dtype) * dtype.type(2.0 ** -mant)
    with np.errstate(all="ignore"):
        span = dtype.type(b) - dtype.type(a)
        if dtype == np.float32:  # XLA:CPU fuses u * span + a into one FMA: exact in f64, one rounding
            return (u.astype(np.float64) * np.float64(span) + np.float64(dtype.type(a))).astype(dtype)
        return (u * span + dtype.type(a)).astype(dtype)


def uniform_int_from_bits(words: np.ndarray, a, b, dtype) -> np.ndarray:
    """XLA's ConvertRandomBitsToUniformInt: a + (bits mod (b - a)), with unsigned wrap-around and
    XLA's remainder by zero (x rem 0 = x) when b == a."""
    dtype = np.dtype(dtype)
    w = 8 * dtype.itemsize
    mask = (1 << w) - 1
    ut = np.uint32 if w == 32 else np.uint64
    a_u = int(np.asarray(a, dtype).reshape(()).view(ut))
    b_u = int(np.asarray(b, dtype).reshape(()).view(ut))
    rng = (b_u - a_u) & mask
    bits = words.astype(np.uint64)
    dist = bits % np.uint64(rng) if rng else bits
    half = dist >> np.uint64(1)
    tot = (np.uint64(a_u) + half + (dist - half)) & np.uint64(mask)  # no overflow: each term < 2**w
    return tot.astype(ut).view(dtype)


@kernel("rng")
def _k_rng(ins, ctx):
    dist = ins.attrs.get("distribution")
    sh = ins.shape
    if sh is None or sh.is_tuple:
        raise error_at(ins, "rng needs an array result shape")
    et = sh.element_type
    dims = tuple(sh.dims)
    n = math.prod(dims)
    name = et.name
    if dist == "rng_uniform":
        if name not in ("f32", "f64", "f16", "bf16", "s32", "u32", "s64", "u64"):
            raise unsupported(ins, f"rng_uniform of {name} (XLA:CPU supports f16, bf16, f32, f64, s32, "
                                   "u32, s64, u64)")
    elif dist == "rng_normal":
        if name not in ("f32", "f64", "f16", "bf16"):
            raise unsupported(ins, f"rng_normal of {name} (floats only)")
    else:
        raise unsupported(ins, f"distribution {dist}")
    if len(ins.operands) != 2:
        raise error_at(ins, "rng takes two scalar operands")
    wide = name in ("f64", "s64", "u64")
    compute = np.dtype({"f16": np.float32, "bf16": np.float32}.get(name, et.dtype)).type
    units = n * (2 if wide else 1)  # XLA's delta: the number of 32-bit words of the result
    st = module_state(ctx)
    key = RNG_KEY
    ctx.check_alloc(ins, sh)
    bits = 64 if wide else 32

    def draw(ddims):
        c = st.get_and_add(units)
        w, _, _ = philox_bits(key, int(c[0]), int(c[1]), ddims, bits)
        return w

    def run(a, b):
        if dist == "rng_uniform":
            if et.kind == "float":
                w = draw(dims)
                r = uniform_from_bits(w, np.asarray(a).astype(compute), np.asarray(b).astype(compute), compute)
                return r.astype(et.dtype)
            return uniform_int_from_bits(draw(dims), a, b, et.dtype)
        split, half = _halves(dims)
        conc = list(half)
        conc.insert(split + 1, 2)
        conc = tuple(conc) if dims else (2,)
        w = draw(conc)
        u = uniform_from_bits(w, 0.0, 1.0, compute)
        with np.errstate(all="ignore"):
            u0 = np.take(u, 0, axis=split + 1 if dims else 0)
            u1 = np.take(u, 1, axis=split + 1 if dims else 0)
            u0 = np.maximum(u0, compute(1e-7))
            v1 = compute(2.0 * np.pi) * u1
            r = np.sqrt(compute(-2.0) * np.log(u0))
            z = np.stack([np.sin(v1) * r, np.cos(v1) * r], axis=split + 1 if dims else 0)
            if dims:
                full = list(half)
                full[split] *= 2
                z = z.reshape(full)
                if full[split] != dims[split]:
                    z = np.take(z, np.arange(dims[split]), axis=split)
            else:
                z = z.reshape(-1)[0].reshape(())
            mu = np.asarray(a).astype(compute)
            sg = np.asarray(b).astype(compute)
            if compute is np.float32:  # one FMA on XLA:CPU: exact product in f64, one rounding
                r = (np.float64(mu) + np.float64(sg) * z.astype(np.float64)).astype(np.float32)
            else:
                r = (mu + sg * z).astype(compute)
            return r.astype(et.dtype)
    return run
