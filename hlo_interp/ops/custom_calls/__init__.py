"""custom-call: the target registry and the `custom-call` kernel (registry.py), and the targets XLA and
JAX emit in real dumps, one module per family beside it.  Importing this package registers them all.

Built-in targets (on one device):
  * TopK (topk.py): (values, s32 indices) of the k largest along the last dimension, k = the result's last
    dimension.  For f32, XLA:CPU runs its runtime TopK, which ignores the comparator: total order
    (+NaN largest, -0 < +0), lower index first on ties.  For other types XLA decomposes TopK into a
    sort by the comparator (2 parameters: values; 4: values and s32 indices), then a slice: the same
    here (stable sort by the comparator, the first k).
  * Sharding, SPMDFullToShardShape, SPMDShardToFullShape, xla.sdy.FuncResultSharding (sharding.py):
    sharding annotations; on one device the value itself.  A shard/full shape change (a program partitioned
    over several devices) is refused: it needs a multi-device run.
  * __cublas$gemm, __cublas$lt$matmul (XLA:GPU dumps; cublas.py): alpha·dot + beta·c with the
    GemmBackendConfig's dimension numbers, epilogues DEFAULT/RELU/BIAS/BIAS_RELU (others refused).
  * LAPACK FFI targets JAX's linalg emits on CPU (lapack.py): lapack_?potrf_ffi, ?trsm, ?getrf, ?geqrf,
    ?orgqr/?ungqr, ?geqp3, ?gehrd, ?sytrd/?hetrd, ?gtsv, ?syevd/?heevd, ?geev (left vectors too),
    ?gees, ?gesdd, ?gesvd,
    and what JAX lowers lu/qr/cholesky/eigh/svd/eig/tridiagonal to for CUDA and ROCm: cusolver_/
    hipsolver_ potrf, syevd, getrf, geqrf, orgqr, sytrd, gesvdj (_ffi), cu_/hip_lu_pivots_to_permutation,
    cuhybrid_/hiphybrid_ eig_real, eig_comp, geqp3, cusparse_/hipsparse_gtsv2_ffi.
  * SliceToDynamic / PadToStatic (XLA's dynamic padder; dynamic.py): between static arrays and dynamic ones.
  * the cuDNN convolutions of XLA:GPU dumps (cudnn.py): __cudnn$convForward, __cudnn$convBackwardInput,
    __cudnn$convBackwardFilter, __cudnn$convBiasActivationForward (see _t_cudnn_conv).
  * identities on XLA:CPU (xla_cpu.py): MoveToHost, MoveToDevice, ShardBarrierFrom/To, annotate_device_placement,
    LayoutConstraint, SetBound; AllocateBuffer (zeros: XLA leaves it uninitialized); GetRngSeed (a u64
    from the module's rng counter: XLA's differs every run); Qr (LAPACK ?geqrf's packed
    result; in lapack.py); __onednn$layernorm (oneDNN's layer norm, within a stated tolerance).
Everything else (e.g. TPU's Eigh) is unknown: the kernel's message says how to
register a Python implementation (`hlo_interp.register_custom_call`).
"""
from . import cublas, cudnn, dynamic, lapack, sharding, topk, xla_cpu  # noqa: F401 - register their targets
from .registry import (TARGETS, USER_TARGETS, backend_config_dict, backend_config_text, register,
                       registered_targets, target)

__all__ = ["TARGETS", "USER_TARGETS", "backend_config_dict", "backend_config_text", "register",
           "registered_targets", "target"]
