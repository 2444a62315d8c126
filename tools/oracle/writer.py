"""The writer of the one case format (tests/golden/<family>/<case>/, described in tests/golden/README.md).

Dev-only, but it needs no JAX: the case directories are written from texts and arrays, whoever computed
them.  A case directory holds `before.hlo` (the text as given: hand-written, or JAX's pre-optimization
module), `after.hlo` when XLA's optimized module was kept, `inputs.npz` (arg0, arg1, ...),
`expected.npz` (out0, out1, ...: XLA:CPU's result leaves, depth-first) and `case.json`.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "golden"

# dtypes np.save writes and np.load reads back; others (bf16, f8, int4, ...) are stored as raw bits
NATIVE = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
          "float32", "float64", "complex64", "complex128"}
HLO_NAME = {"bool": "pred", "int8": "s8", "int16": "s16", "int32": "s32", "int64": "s64", "uint8": "u8",
            "uint16": "u16", "uint32": "u32", "uint64": "u64", "float16": "f16", "float32": "f32",
            "float64": "f64", "complex64": "c64", "complex128": "c128", "bfloat16": "bf16", "int2": "s2",
            "int4": "s4", "uint2": "u2", "uint4": "u4", "float4_e2m1fn": "f4e2m1fn",
            "float8_e3m4": "f8e3m4", "float8_e4m3": "f8e4m3", "float8_e4m3fn": "f8e4m3fn",
            "float8_e4m3fnuz": "f8e4m3fnuz", "float8_e4m3b11fnuz": "f8e4m3b11fnuz", "float8_e5m2": "f8e5m2",
            "float8_e5m2fnuz": "f8e5m2fnuz", "float8_e8m0fnu": "f8e8m0fnu"}


def store(arr) -> tuple[np.ndarray, dict]:
    """(array np.savez can write, metadata): ml_dtypes arrays become their raw bits (`stored_as`)."""
    arr = np.asarray(arr)
    name = arr.dtype.name
    meta = {"dtype": name, "hlo_type": HLO_NAME.get(name, name), "shape": list(arr.shape)}
    if name in NATIVE:
        return arr, meta
    raw = arr.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[arr.dtype.itemsize])
    meta["stored_as"] = raw.dtype.name
    return raw, meta


def opcodes(text: str) -> list[str]:
    """The opcodes a text uses (our parser; a regex where it refuses the text)."""
    try:
        import hlo_interp
        ops = set()
        for m in hlo_interp.parse_all(text):
            ops |= {ins.opcode for c in m.computations for ins in c.instructions}
        return sorted(ops)
    except Exception:  # noqa: BLE001 - a text our parser refuses (or a parser broken mid-edit)
        ops = re.findall(r"=\s*(?:\([^=]*?\)|[a-z0-9]+\[[^\]]*\](?:\{[^}]*\})?)\s+([a-z][a-z0-9-]*)\(", text)
        return sorted(set(ops))


def _finfo_smallest_normal(dt) -> float:
    import ml_dtypes
    try:
        return float(np.finfo(dt).smallest_normal)
    except (TypeError, ValueError):
        return float(ml_dtypes.finfo(dt).smallest_normal)


def has_subnormal(a) -> bool:
    """A subnormal of the array's type, or (for types XLA computes in f32) a value below f32's normal range."""
    a = np.asarray(a)
    if a.dtype.kind == "c":
        return has_subnormal(a.real) or has_subnormal(a.imag)
    floaty = a.dtype.kind == "f" or (a.dtype.kind == "V" and "float" in a.dtype.name)
    if not floaty or a.size == 0:
        return False
    with np.errstate(all="ignore"):
        v = np.abs(a.astype(np.float64))
    limit = _finfo_smallest_normal(a.dtype)
    if a.dtype != np.float64:
        limit = max(limit, float(np.finfo(np.float32).smallest_normal))
    return bool(((v > 0) & (v < limit)).any())


def write_case(family: str, name: str, texts: dict, args: Sequence, outs: Sequence, *, source: str,
               compare: Any = "exact", root: Path = GOLDEN, labels: Optional[Sequence] = None,
               out_compare: Optional[dict] = None, extra: Optional[dict] = None, compress: bool = True) -> Path:
    """Write one case directory `root/family/name/` (replacing an older one) and return it.

    `texts`: {"before": text, "after": XLA's optimized text} ("after" may be absent); `args`/`outs`: the
    entry's arguments and XLA:CPU's result leaves; `compare`: the case's rule; `out_compare`:
    {k: (rule, reason)} for outputs compared by their own rule; `extra`: more case.json keys; `compress`:
    npz compression (the families of tools/make_golden.py were written uncompressed)."""
    d = root / family / name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    variants = [v for v in ("before", "after") if v in texts]
    assert variants and variants[0] == "before", texts.keys()
    for v in variants:
        (d / f"{v}.hlo").write_text(texts[v])
    ins, ins_meta = {}, []
    for k, a in enumerate(args):
        raw, meta = store(a)
        ins[f"arg{k}"] = raw
        ins_meta.append({"key": f"arg{k}", **meta})
    res, outs_meta = {}, []
    for k, a in enumerate(outs):
        raw, meta = store(a)
        res[f"out{k}"] = raw
        if labels and k < len(labels):
            meta["label"] = str(labels[k])
        outs_meta.append({"key": f"out{k}", **meta})
    for k, (rule, reason) in (out_compare or {}).items():
        outs_meta[k]["compare"] = rule
        outs_meta[k]["compare_reason"] = reason
    save = np.savez_compressed if compress else np.savez
    save(d / "inputs.npz", **ins)
    save(d / "expected.npz", **res)
    before_ops = opcodes(texts["before"])
    all_ops = set(before_ops)
    for v in variants[1:]:
        all_ops |= set(opcodes(texts[v]))
    info = {
        "name": f"{family}/{name}",
        "family": family,
        "source": source,
        "opcodes": sorted(all_ops),
        "opcodes_before": before_ops,
        "dtypes": sorted({m["hlo_type"] for m in ins_meta + outs_meta}),
        "compare": compare,
        "inputs": ins_meta,
        "outputs": outs_meta,
    }
    if variants != ["before", "after"]:
        info["variants"] = variants
    if any(has_subnormal(a) for a in list(args) + list(outs)):
        info["subnormals"] = True  # XLA:CPU flushes f32/f64 subnormals (FTZ+DAZ): see the README
    info.update(extra or {})
    (d / "case.json").write_text(json.dumps(info, indent=1) + "\n")
    return d
