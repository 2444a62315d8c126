"""XLA's binary dumps: HloModuleProto, HloProto and HloSnapshot files, read with the `protobuf` package.

`--xla_dump_hlo_as_proto` writes `*.hlo.pb` (an HloModuleProto; older XLAs an HloProto wrapping one),
`--xla_dump_hlo_snapshots` writes `*.snapshot.N.pb` (an HloSnapshot: an HloProto, the arguments as
LiteralProtos and often the result).  The message schema below is our own description of the wire format
(field numbers and types are those of XLA's xla/service/hlo.proto and xla/xla_data.proto); the .proto files
are not needed, nor protoc.  Enum fields are read as integers.

A module proto becomes HLO text the way XLA prints it (operands, attributes, metadata, layouts), which the
ordinary parser then reads: so a .pb is the same IR as its .txt, and every command works on both.
"""
from __future__ import annotations

import math
from functools import lru_cache

from .diagnostics import HloError
from .opcodes import opcodes_where

# --------------------------------------------------------------------------------------------------
# The schema: message -> [(field, number, type, repeated)]; a type is a scalar name or a message name.

_I64, _I32, _U32, _U64, _BOOL, _STR, _BYTES, _F32, _F64 = ("int64", "int32", "uint32", "uint64", "bool",
                                                           "string", "bytes", "float", "double")
_ENUM = _I32  # proto3 enums are varints: read as int32
R = True  # repeated

_SCHEMA: dict = {
    "ShapeProto": [("element_type", 2, _ENUM), ("dimensions", 3, _I64, R), ("is_dynamic_dimension", 6, _BOOL, R),
                   ("tuple_shapes", 4, "ShapeProto", R), ("layout", 5, "LayoutProto")],
    "TileProto": [("dimensions", 1, _I64, R)],
    "LayoutProto": [("minor_to_major", 1, _I64, R), ("tiles", 6, "TileProto", R),
                    ("tail_padding_alignment_in_elements", 16, _I64), ("element_size_in_bits", 7, _I64),
                    ("memory_space", 8, _I64), ("index_primitive_type", 11, _ENUM),
                    ("pointer_primitive_type", 12, _ENUM), ("physical_shape", 10, "ShapeProto"),
                    ("dynamic_shape_metadata_prefix_bytes", 15, _I64)],
    "ProgramShapeProto": [("parameters", 1, "ShapeProto", R), ("result", 2, "ShapeProto"),
                          ("parameter_names", 3, _STR, R)],
    "OpMetadata": [("op_type", 1, _STR), ("op_name", 2, _STR), ("source_file", 3, _STR), ("source_line", 4, _I32),
                   ("source_end_line", 17, _I32), ("source_column", 18, _I32), ("source_end_column", 19, _I32),
                   ("deduplicated_name", 12, _STR), ("stack_frame_id", 15, _I32), ("scheduling_name", 16, _STR)],
    "LiteralProto": [("shape", 1, "ShapeProto"), ("preds", 2, _BOOL, R), ("s8s", 15, _BYTES), ("u8s", 3, _BYTES),
                     ("s32s", 4, _I32, R), ("s64s", 5, _I64, R), ("u32s", 6, _U32, R), ("u64s", 7, _U64, R),
                     ("f32s", 8, _F32, R), ("f64s", 9, _F64, R), ("c64s", 12, _F32, R), ("c128s", 18, _F64, R),
                     ("tuple_literals", 10, "LiteralProto", R), ("f16s", 11, _BYTES), ("bf16s", 13, _BYTES),
                     ("u16s", 16, _BYTES), ("s16s", 17, _BYTES), ("s1s", 30, _BYTES), ("s2s", 26, _BYTES),
                     ("s4s", 21, _BYTES), ("u1s", 31, _BYTES), ("u2s", 27, _BYTES), ("u4s", 22, _BYTES),
                     ("f4e2m1fns", 32, _BYTES), ("f8e3m4s", 29, _BYTES), ("f8e4m3b11fnuzs", 23, _BYTES),
                     ("f8e4m3fns", 20, _BYTES), ("f8e4m3fnuzs", 25, _BYTES), ("f8e4m3s", 28, _BYTES),
                     ("f8e5m2fnuzs", 24, _BYTES), ("f8e5m2s", 19, _BYTES), ("f8e8m0fnus", 33, _BYTES)],
    "WindowDimension": [("size", 1, _I64), ("stride", 2, _I64), ("padding_low", 3, _I64), ("padding_high", 4, _I64),
                        ("window_dilation", 5, _I64), ("base_dilation", 6, _I64), ("window_reversal", 7, _BOOL)],
    "Window": [("dimensions", 1, "WindowDimension", R)],
    "ConvolutionDimensionNumbers": [
        ("input_batch_dimension", 7, _I64), ("input_feature_dimension", 8, _I64),
        ("input_spatial_dimensions", 11, _I64, R), ("kernel_input_feature_dimension", 3, _I64),
        ("kernel_output_feature_dimension", 4, _I64), ("kernel_spatial_dimensions", 6, _I64, R),
        ("output_batch_dimension", 9, _I64), ("output_feature_dimension", 10, _I64),
        ("output_spatial_dimensions", 12, _I64, R)],
    "DotDimensionNumbers": [("lhs_contracting_dimensions", 1, _I64, R), ("rhs_contracting_dimensions", 2, _I64, R),
                            ("lhs_batch_dimensions", 3, _I64, R), ("rhs_batch_dimensions", 4, _I64, R)],
    "GatherDimensionNumbers": [("offset_dims", 1, _I64, R), ("collapsed_slice_dims", 2, _I64, R),
                               ("start_index_map", 3, _I64, R), ("index_vector_dim", 4, _I64),
                               ("operand_batching_dims", 5, _I64, R), ("start_indices_batching_dims", 6, _I64, R)],
    "ScatterDimensionNumbers": [("update_window_dims", 1, _I64, R), ("inserted_window_dims", 2, _I64, R),
                                ("scatter_dims_to_operand_dims", 3, _I64, R), ("index_vector_dim", 4, _I64),
                                ("input_batching_dims", 5, _I64, R), ("scatter_indices_batching_dims", 6, _I64, R)],
    "PaddingConfigDimension": [("edge_padding_low", 1, _I64), ("edge_padding_high", 2, _I64),
                               ("interior_padding", 3, _I64)],
    "PaddingConfig": [("dimensions", 1, "PaddingConfigDimension", R)],
    "PrecisionConfig": [("operand_precision", 1, _ENUM, R), ("algorithm", 2, _ENUM)],
    "OpSharding": [("type", 1, _ENUM), ("tile_shape", 2, "ShapeProto"), ("tile_assignment_dimensions", 3, _I64, R),
                   ("tile_assignment_devices", 4, _I64, R), ("tuple_shardings", 5, "OpSharding", R),
                   ("replicate_on_last_tile_dim", 6, _BOOL), ("last_tile_dims", 8, _ENUM, R),
                   ("iota_reshape_dims", 9, _I64, R), ("iota_transpose_perm", 10, _I32, R)],
    "StringPair": [("key", 1, _STR), ("value", 2, _STR)],
    "FrontendAttributes": [("map", 1, "StringPair", R)],
    "ReplicaGroup": [("replica_ids", 1, _I64, R)],
    "SourceTarget": [("source", 1, _I64), ("target", 2, _I64)],
    "TriangularSolveOptions": [("left_side", 1, _BOOL), ("lower", 2, _BOOL), ("unit_diagonal", 3, _BOOL),
                               ("transpose_a", 4, _ENUM)],
    "CholeskyOptions": [("lower", 1, _BOOL)],
    "ParameterReplication": [("replicated_at_leaf_buffers", 1, _BOOL, R)],
    "OutputOperandAliasing": [("output_shape_index", 1, _I64, R), ("operand_index", 2, _I64),
                              ("operand_shape_index", 3, _I64, R)],
    "Tolerance": [("atol", 1, _F64), ("rtol", 2, _F64), ("ulps", 3, _I64)],
    "ResultAccuracy": [("mode", 1, _ENUM), ("tolerance", 2, "Tolerance")],
    "IotaReplicaGroupListProto": [("num_replica_groups", 1, _I64), ("num_devices_per_group", 2, _I64),
                                  ("iota_reshape_dims", 3, _I64, R), ("iota_transpose_perm", 4, _I32, R)],
    "CollectiveDeviceListProto": [("replica_groups", 1, "ReplicaGroup", R),
                                  ("iota_replica_group_list", 2, "IotaReplicaGroupListProto")],
    "SliceDimensions": [("start", 1, _I64), ("limit", 2, _I64), ("stride", 3, _I64)],
    "HloInstructionProto": [
        ("name", 1, _STR), ("opcode", 2, _STR), ("shape", 3, "ShapeProto"), ("metadata", 7, "OpMetadata"),
        ("literal", 8, "LiteralProto"), ("parameter_number", 9, _I64), ("fusion_kind", 11, _STR),
        ("tuple_index", 13, _I64), ("dimensions", 14, _I64, R), ("window", 15, "Window"),
        ("convolution_dimension_numbers", 16, "ConvolutionDimensionNumbers"), ("feature_group_count", 50, _I64),
        ("batch_group_count", 58, _I64), ("slice_dimensions", 17, "SliceDimensions", R),
        ("exponent_bits", 18, _I32), ("mantissa_bits", 19, _I32), ("dynamic_slice_sizes", 20, _I64, R),
        ("padding_config", 21, "PaddingConfig"), ("outfeed_config", 22, _BYTES), ("distribution", 23, _ENUM),
        ("epsilon", 24, _F32), ("feature_index", 25, _I64), ("channel_id", 26, _I64),
        ("infeed_config", 27, _BYTES), ("custom_call_target", 28, _STR), ("outfeed_shape", 29, "ShapeProto"),
        ("dot_dimension_numbers", 30, "DotDimensionNumbers"), ("fft_type", 31, _ENUM), ("fft_length", 32, _I64, R),
        ("comparison_direction", 63, _STR), ("gather_dimension_numbers", 33, "GatherDimensionNumbers"),
        ("gather_slice_sizes", 34, _I64, R), ("id", 35, _I64), ("operand_ids", 36, _I64, R),
        ("control_predecessor_ids", 37, _I64, R), ("called_computation_ids", 38, _I64, R),
        ("sharding", 40, "OpSharding"), ("backend_config", 43, _BYTES), ("replica_groups", 49, "ReplicaGroup", R),
        ("use_global_device_ids", 71, _BOOL), ("is_host_transfer", 47, _BOOL), ("is_stable", 60, _BOOL),
        ("scatter_dimension_numbers", 48, "ScatterDimensionNumbers"), ("precision_config", 51, "PrecisionConfig"),
        ("source_target_pairs", 52, "SourceTarget", R), ("constrain_layout", 56, _BOOL),
        ("operand_shapes_with_layout", 57, "ShapeProto", R),
        ("triangular_solve_options", 59, "TriangularSolveOptions"), ("cholesky_options", 62, "CholeskyOptions"),
        ("parameter_replication", 61, "ParameterReplication"), ("custom_call_has_side_effect", 65, _BOOL),
        ("output_operand_aliasing", 74, "OutputOperandAliasing", R), ("custom_call_schedule", 76, _ENUM),
        ("delta", 66, _I64), ("indices_are_sorted", 67, _BOOL), ("frontend_attributes", 68, "FrontendAttributes"),
        ("unique_indices", 69, _BOOL), ("rng_algorithm", 70, _ENUM), ("comparison_type", 72, _STR),
        ("padding_type", 75, _ENUM), ("custom_call_api_version", 77, _ENUM), ("async_execution_thread", 79, _STR),
        ("k", 81, _I64), ("largest", 85, _BOOL), ("collective_device_list", 87, "CollectiveDeviceListProto"),
        ("is_composite", 89, _BOOL), ("result_accuracy", 91, "ResultAccuracy"), ("is_reverse", 94, _BOOL),
        ("num_carries", 95, _I64)],
    "HloComputationProto": [("name", 1, _STR), ("instructions", 2, "HloInstructionProto", R),
                            ("program_shape", 4, "ProgramShapeProto"), ("id", 5, _I64), ("root_id", 6, _I64),
                            ("is_fusion_computation", 7, _BOOL), ("execution_thread", 8, _STR)],
    "InstructionSequence": [("instruction_ids", 1, _I64, R)],
    "SequenceEntry": [("key", 1, _I64), ("value", 2, "InstructionSequence")],
    "HloScheduleProto": [("sequences", 1, "SequenceEntry", R)],
    "AliasEntryProto": [("output_shape_index", 1, _I64, R), ("parameter_number", 2, _I64),
                        ("parameter_shape_index", 3, _I64, R), ("kind", 4, _ENUM)],
    "HloInputOutputAliasProto": [("entries", 1, "AliasEntryProto", R)],
    "BufferDonorEntryProto": [("parameter_number", 1, _I64), ("parameter_shape_index", 2, _I64, R)],
    "HloBufferDonorProto": [("entries", 1, "BufferDonorEntryProto", R)],
    "FileLocation": [("file_name_id", 1, _I32), ("function_name_id", 2, _I32), ("line", 3, _I32),
                     ("end_line", 5, _I32), ("column", 4, _I32), ("end_column", 6, _I32)],
    "StackFrame": [("file_location_id", 1, _I32), ("parent_frame_id", 2, _I32)],
    "StackFrameIndexProto": [("file_names", 1, _STR, R), ("function_names", 2, _STR, R),
                             ("file_locations", 3, "FileLocation", R), ("stack_frames", 4, "StackFrame", R)],
    "HloModuleProto": [("name", 1, _STR), ("entry_computation_name", 2, _STR), ("entry_computation_id", 6, _I64),
                       ("computations", 3, "HloComputationProto", R), ("host_program_shape", 4, "ProgramShapeProto"),
                       ("id", 5, _I64), ("schedule", 7, "HloScheduleProto"),
                       ("input_output_alias", 8, "HloInputOutputAliasProto"), ("buffer_donor", 18, "HloBufferDonorProto"),
                       ("is_dynamic", 11, _BOOL), ("spmd_output_sharding", 12, "OpSharding"),
                       ("spmd_parameters_shardings", 14, "OpSharding", R), ("stack_frame_index", 17, "StackFrameIndexProto"),
                       ("frontend_attributes", 19, "FrontendAttributes"), ("device_type", 21, _STR)],
    "HloProto": [("hlo_module", 1, "HloModuleProto")],
    "HloSnapshot": [("hlo", 1, "HloProto"), ("arguments", 2, "LiteralProto", R), ("result", 3, "LiteralProto"),
                    ("execution_platform", 4, _STR)],
}


@lru_cache(maxsize=None)
def _classes() -> dict:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    F = descriptor_pb2.FieldDescriptorProto
    scalar = {_I64: F.TYPE_INT64, _I32: F.TYPE_INT32, _U32: F.TYPE_UINT32, _U64: F.TYPE_UINT64,
              _BOOL: F.TYPE_BOOL, _STR: F.TYPE_STRING, _BYTES: F.TYPE_BYTES, _F32: F.TYPE_FLOAT,
              _F64: F.TYPE_DOUBLE}
    fd = descriptor_pb2.FileDescriptorProto(name="hlo_interp_xla_schema.proto", package="hlo_interp_xla",
                                            syntax="proto3")
    for mname, fields in _SCHEMA.items():
        msg = fd.message_type.add(name=mname)
        for spec in fields:
            fname, number, typ = spec[:3]
            repeated = len(spec) > 3 and spec[3]
            f = msg.field.add(name=fname, number=number,
                              label=F.LABEL_REPEATED if repeated else F.LABEL_OPTIONAL)
            if typ in scalar:
                f.type = scalar[typ]
            else:
                f.type = F.TYPE_MESSAGE
                f.type_name = f".hlo_interp_xla.{typ}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"hlo_interp_xla.{name}"))
            for name in ("HloModuleProto", "HloProto", "HloSnapshot", "LiteralProto")}


# --------------------------------------------------------------------------------------------------
# Reading a file

_PRIMITIVE = {1: "pred", 30: "s1", 26: "s2", 21: "s4", 2: "s8", 3: "s16", 4: "s32", 5: "s64", 31: "u1", 27: "u2",
              22: "u4", 6: "u8", 7: "u16", 8: "u32", 9: "u64", 10: "f16", 11: "f32", 16: "bf16", 12: "f64",
              19: "f8e5m2", 28: "f8e4m3", 20: "f8e4m3fn", 23: "f8e4m3b11fnuz", 29: "f8e3m4", 24: "f8e5m2fnuz",
              25: "f8e4m3fnuz", 32: "f4e2m1fn", 33: "f8e8m0fnu", 15: "c64", 18: "c128", 13: "tuple",
              14: "opaque", 17: "token"}


def _parse(cls_name: str, data: bytes):
    from google.protobuf.message import DecodeError
    msg = _classes()[cls_name]()
    try:
        msg.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError, OverflowError) as e:
        return None, str(e) or "damaged"
    return msg, None


def _plausible_module(m) -> bool:
    return bool(m is not None and m.computations and m.name and all(c.instructions for c in m.computations))


def decode(data: bytes, filename: str):
    """(HloModuleProto, snapshot or None): the module in an HloModuleProto, HloProto or HloSnapshot file."""
    if not data:
        raise HloError("empty file (expected an XLA HloModuleProto, HloProto or HloSnapshot)", filename=filename)
    snap_first = "snapshot" in filename
    order = ["HloSnapshot", "HloModuleProto", "HloProto"] if snap_first else ["HloModuleProto", "HloProto",
                                                                              "HloSnapshot"]
    for kind in order:
        msg, err = _parse(kind, data)
        if msg is None:
            continue
        if kind == "HloModuleProto" and _plausible_module(msg):
            return msg, None
        if kind == "HloProto" and _plausible_module(msg.hlo_module):
            return msg.hlo_module, None
        if kind == "HloSnapshot" and _plausible_module(msg.hlo.hlo_module):
            return msg.hlo.hlo_module, msg
    raise HloError("not an XLA HLO proto (HloModuleProto, HloProto or HloSnapshot): the bytes do not decode "
                   "as one", filename=filename)


def read_proto_file(name: str) -> tuple:
    """(module text, arguments, result) of a .pb file: the text XLA would print for its module; for a
    snapshot also the recorded arguments and result leaves (NumPy), else None."""
    from pathlib import Path
    try:
        data = Path(name).read_bytes()
    except FileNotFoundError:
        raise HloError("no such file", filename=name) from None
    except OSError as e:
        raise HloError(f"cannot read: {e.strerror}", filename=name) from None
    mp, snap = decode(data, name)
    text = module_text(mp, name)
    args = result = None
    if snap is not None:
        args = [literal_to_numpy(a, name) for a in snap.arguments]
        if snap.HasField("result"):
            result = _leaves(literal_to_numpy(snap.result, name))
    return text, args, result


def _leaves(v) -> list:
    if isinstance(v, tuple):
        out = []
        for x in v:
            out += _leaves(x)
        return out
    return [v]


# --------------------------------------------------------------------------------------------------
# Literals

def literal_to_numpy(lit, filename: str = "<proto>"):
    """A LiteralProto as a NumPy array (a tuple literal: a Python tuple of them)."""
    import numpy as np
    from .types import primitive_type
    et = _PRIMITIVE.get(lit.shape.element_type)
    if et == "tuple":
        return tuple(literal_to_numpy(t, filename) for t in lit.tuple_literals)
    if et is None:
        raise HloError(f"literal of unknown element type {lit.shape.element_type}", filename=filename)
    dims = tuple(lit.shape.dimensions)
    if et == "token":
        from .ops.registry import TOKEN
        return TOKEN
    dtype = primitive_type(et).dtype
    count = math.prod(dims)
    field = {"pred": "preds", "s32": "s32s", "s64": "s64s", "u32": "u32s", "u64": "u64s", "f32": "f32s",
             "f64": "f64s", "c64": "c64s", "c128": "c128s"}.get(et)
    if field is not None:
        vals = list(getattr(lit, field))
        if et in ("c64", "c128"):
            flat = np.array(vals, np.float32 if et == "c64" else np.float64)
            arr = (flat[0::2] + 1j * flat[1::2]).astype(dtype) if flat.size else np.zeros(0, dtype)
        else:
            arr = np.array(vals, dtype=dtype)
    else:
        raw = getattr(lit, et + "s", None)
        if raw is None:
            raise HloError(f"literals of type {et} are not supported in protos", filename=filename)
        if et in ("s4", "u4", "s2", "u2", "s1", "u1", "f4e2m1fn"):
            arr = np.frombuffer(raw, dtype=np.uint8).view(dtype) if dtype.itemsize == 1 else np.array(raw)
        else:
            arr = np.frombuffer(raw, dtype=dtype.newbyteorder("<")).astype(dtype)
    if arr.size != count:
        raise HloError(f"literal of shape {et}{list(dims)} has {arr.size} values", filename=filename)
    # the data is in the layout's order (minor_to_major); default layout = row-major
    m2m = list(lit.shape.layout.minor_to_major) if lit.shape.HasField("layout") else []
    if m2m and m2m != list(range(len(dims) - 1, -1, -1)):
        major_to_minor = m2m[::-1]
        arr = arr.reshape([dims[d] for d in major_to_minor]).transpose(np.argsort(major_to_minor))
    return np.array(arr.reshape(dims), copy=True, order="C")


def _value_text(v, et: str) -> str:
    import numpy as np
    if et == "pred":
        return "true" if bool(v) else "false"
    if et in ("c64", "c128"):
        return f"({_value_text(v.real, 'f64')}, {_value_text(v.imag, 'f64')})"
    if isinstance(v, (np.integer, int)):
        return str(int(v))
    x = float(v)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(x)


def _literal_text(arr, et: str) -> str:
    if arr.ndim == 0:
        return _value_text(arr[()], et)

    def rec(a):
        if a.ndim == 1:
            return "{" + ", ".join(_value_text(x, et) for x in a) + "}"
        return "{ " + ", ".join(rec(x) for x in a) + " }"
    return rec(arr)


def _literal_proto_text(lit) -> str:
    et = _PRIMITIVE.get(lit.shape.element_type)
    if et == "tuple":
        return "(" + ", ".join(_literal_proto_text(t) for t in lit.tuple_literals) + ")"
    return _literal_text(literal_to_numpy(lit), et)


# --------------------------------------------------------------------------------------------------
# Module proto -> HLO text

def _shape_text(s, layout: bool = True) -> str:
    et = _PRIMITIVE.get(s.element_type, f"<type {s.element_type}>")
    if et == "tuple":
        return "(" + ", ".join(_shape_text(t, layout) for t in s.tuple_shapes) + ")"
    if et == "token":
        return "token[]"
    if et == "opaque":
        return "opaque[]"
    dyn = list(s.is_dynamic_dimension)
    dims = ",".join(("<=" if k < len(dyn) and dyn[k] else "") + str(d) for k, d in enumerate(s.dimensions))
    out = f"{et}[{dims}]"
    if layout and s.HasField("layout"):
        out += _layout_text(s.layout, len(s.dimensions))
    return out


def _layout_text(lay, rank: int) -> str:
    parts = ",".join(str(d) for d in lay.minor_to_major)
    extra = []
    if lay.tiles:
        extra.append("T" + "".join("(" + ",".join("*" if d == -2**63 else str(d) for d in t.dimensions) + ")"
                                   for t in lay.tiles))
    if lay.tail_padding_alignment_in_elements > 1:
        extra.append(f"L({lay.tail_padding_alignment_in_elements})")
    if lay.index_primitive_type:
        extra.append(f"#({_PRIMITIVE[lay.index_primitive_type]})")
    if lay.pointer_primitive_type:
        extra.append(f"*({_PRIMITIVE[lay.pointer_primitive_type]})")
    if lay.element_size_in_bits:
        extra.append(f"E({lay.element_size_in_bits})")
    if lay.memory_space:
        extra.append(f"S({lay.memory_space})")
    if lay.HasField("physical_shape"):
        extra.append(f"P({_shape_text(lay.physical_shape)})")
    if lay.dynamic_shape_metadata_prefix_bytes:
        extra.append(f"M({lay.dynamic_shape_metadata_prefix_bytes})")
    if not lay.minor_to_major and rank > 0 and not extra:
        return ""
    return "{" + parts + (":" + "".join(extra) if extra else "") + "}"


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _ints(xs) -> str:
    return "{" + ",".join(str(x) for x in xs) + "}"


def _metadata_text(md) -> str:
    parts = []
    for f in ("op_type", "op_name", "source_file"):
        v = getattr(md, f)
        if v:
            parts.append(f"{f}={_q(v)}")
    for f in ("source_line", "source_end_line", "source_column", "source_end_column"):
        v = getattr(md, f)
        if v:
            parts.append(f"{f}={v}")
    if md.deduplicated_name:
        parts.append(f"deduplicated_name={_q(md.deduplicated_name)}")
    if md.stack_frame_id:
        parts.append(f"stack_frame_id={md.stack_frame_id}")
    if md.scheduling_name:
        parts.append(f"scheduling_name={_q(md.scheduling_name)}")
    return "{" + " ".join(parts) + "}"


def _sharding_text(sh) -> str:
    t = sh.type
    if t == 2:  # TUPLE
        return "{" + ", ".join(_sharding_text(x)[1:-1] for x in sh.tuple_shardings) + "}"
    if t == 0:
        return "{replicated}"
    if t == 4:
        return "{manual}"
    if t == 1:
        return "{maximal device=" + str(sh.tile_assignment_devices[0] if sh.tile_assignment_devices else 0) + "}"
    if t == 5:
        return "{unknown}"
    dims = ",".join(str(d) for d in sh.tile_assignment_dimensions)
    if sh.iota_reshape_dims:
        dev = "<=[" + ",".join(str(d) for d in sh.iota_reshape_dims) + "]"
        if sh.iota_transpose_perm and list(sh.iota_transpose_perm) != list(range(len(sh.iota_reshape_dims))):
            dev += "T(" + ",".join(str(d) for d in sh.iota_transpose_perm) + ")"
    else:
        dev = ",".join(str(d) for d in sh.tile_assignment_devices)
    out = "{devices=[" + dims + "]" + dev
    if sh.replicate_on_last_tile_dim:
        out += " last_tile_dim_replicate"
    if sh.last_tile_dims:
        names = {0: "replicated", 1: "maximal", 3: "other", 4: "manual", 5: "unknown"}
        out += " last_tile_dims={" + ", ".join(names.get(x, str(x)) for x in sh.last_tile_dims) + "}"
    return out + "}"


def _frontend_text(fa) -> str:
    def value(v):  # XLA prints a braced value as it is, any other quoted
        return v if v.startswith("{") and v.endswith("}") else _q(v)
    return "{" + ",".join(f"{e.key}={value(e.value)}" for e in sorted(fa.map, key=lambda e: e.key)) + "}"


_PRECISION = {0: "default", 1: "high", 2: "highest"}
_FFT = {0: "FFT", 1: "IFFT", 2: "RFFT", 3: "IRFFT"}
_TRANSPOSE = {1: "NO_TRANSPOSE", 2: "TRANSPOSE", 3: "ADJOINT"}
_API = {1: "API_VERSION_ORIGINAL", 2: "API_VERSION_STATUS_RETURNING", 3: "API_VERSION_STATUS_RETURNING_UNIFIED",
        4: "API_VERSION_TYPED_FFI"}
_SCHEDULE = {1: "SCHEDULE_LATEST", 2: "SCHEDULE_EARLIEST"}
_ALGORITHMS = ["unset", "dot_any_f8_any_f8_f32", "dot_any_f8_any_f8_f32_fast_accum", "dot_f16_f16_f16",
               "dot_f16_f16_f32", "dot_bf16_bf16_bf16", "dot_bf16_bf16_f32", "dot_bf16_bf16_f32_x3",
               "dot_bf16_bf16_f32_x6", "dot_tf32_tf32_f32", "dot_tf32_tf32_f32_x3", "dot_f32_f32_f32",
               "dot_f64_f64_f64", "dot_bf16_bf16_f32_x9"]
_DIMS_OPS = {"broadcast", "concatenate", "reduce", "reverse", "transpose", "map", "sort", "all-gather",
             "all-gather-start", "reduce-scatter", "all-to-all", "ragged-all-to-all", "scan"}
# the opcodes whose one called computation prints as to_apply= (the table's to_apply attribute;
# custom-call's print as called_computations=)
_TO_APPLY_OPS = opcodes_where(lambda o: "to_apply" in o.attr_names) - {"custom-call"}


def _window_text(w) -> str:
    dims = list(w.dimensions)
    if not dims:
        return "{}"
    parts = ["size=" + "x".join(str(d.size) for d in dims)]
    if any(d.stride != 1 for d in dims):
        parts.append("stride=" + "x".join(str(d.stride) for d in dims))
    if any(d.padding_low or d.padding_high for d in dims):
        parts.append("pad=" + "x".join(f"{d.padding_low}_{d.padding_high}" for d in dims))
    if any(d.base_dilation != 1 for d in dims):
        parts.append("lhs_dilate=" + "x".join(str(d.base_dilation) for d in dims))
    if any(d.window_dilation != 1 for d in dims):
        parts.append("rhs_dilate=" + "x".join(str(d.window_dilation) for d in dims))
    if any(d.window_reversal for d in dims):
        parts.append("rhs_reversal=" + "x".join("1" if d.window_reversal else "0" for d in dims))
    return "{" + " ".join(parts) + "}"


def _dim_labels(cd) -> str:
    def labels(batch, feature, spatial, b, f):
        n = 2 + len(spatial)
        out = ["?"] * n
        out[batch] = b
        out[feature] = f
        for k, d in enumerate(spatial):
            out[d] = str(k)
        return "".join(out)
    return (labels(cd.input_batch_dimension, cd.input_feature_dimension, cd.input_spatial_dimensions, "b", "f")
            + "_" + labels(cd.kernel_input_feature_dimension, cd.kernel_output_feature_dimension,
                           cd.kernel_spatial_dimensions, "i", "o")
            + "->" + labels(cd.output_batch_dimension, cd.output_feature_dimension, cd.output_spatial_dimensions,
                            "b", "f"))


def _instruction_text(ins, names: dict, comps: dict, shapes: dict, filename: str) -> str:
    op = ins.opcode
    ops = [f"%{names[i]}" for i in ins.operand_ids]
    called = [f"%{comps[c]}" for c in ins.called_computation_ids]
    attrs: list = []
    if op == "parameter":
        body = str(ins.parameter_number)
    elif op == "constant":
        body = _literal_proto_text(ins.literal) if ins.HasField("literal") else ""
    else:
        body = ", ".join(ops)
    A = attrs.append
    if op in _DIMS_OPS and (ins.dimensions or op in ("broadcast", "transpose", "reduce", "concatenate")):
        A(f"dimensions={_ints(ins.dimensions)}")
    if op == "iota":
        A(f"iota_dimension={ins.dimensions[0] if ins.dimensions else 0}")
    if op == "get-tuple-element":
        A(f"index={ins.tuple_index}")
    if op == "slice":
        A("slice={" + ", ".join(f"[{d.start}:{d.limit}" + (f":{d.stride}" if d.stride != 1 else "") + "]"
                                for d in ins.slice_dimensions) + "}")
    if op == "dynamic-slice":
        A(f"dynamic_slice_sizes={_ints(ins.dynamic_slice_sizes)}")
    if op == "pad":
        A("padding=" + "x".join(f"{d.edge_padding_low}_{d.edge_padding_high}"
                                + (f"_{d.interior_padding}" if d.interior_padding else "")
                                for d in ins.padding_config.dimensions))
    if ins.HasField("window") and op in ("convolution", "reduce-window", "select-and-scatter"):
        A(f"window={_window_text(ins.window)}")
    if op == "convolution":
        A(f"dim_labels={_dim_labels(ins.convolution_dimension_numbers)}")
    if ins.feature_group_count > 1:
        A(f"feature_group_count={ins.feature_group_count}")
    if ins.batch_group_count > 1:
        A(f"batch_group_count={ins.batch_group_count}")
    if ins.HasField("dot_dimension_numbers") and op in ("dot", "ragged-dot"):
        dn = ins.dot_dimension_numbers
        if dn.lhs_batch_dimensions:
            A(f"lhs_batch_dims={_ints(dn.lhs_batch_dimensions)}")
        A(f"lhs_contracting_dims={_ints(dn.lhs_contracting_dimensions)}")
        if dn.rhs_batch_dimensions:
            A(f"rhs_batch_dims={_ints(dn.rhs_batch_dimensions)}")
        A(f"rhs_contracting_dims={_ints(dn.rhs_contracting_dimensions)}")
    if ins.HasField("precision_config"):
        pc = ins.precision_config
        if any(p != 0 for p in pc.operand_precision):
            A("operand_precision={" + ",".join(_PRECISION.get(p, str(p)) for p in pc.operand_precision) + "}")
        if pc.algorithm:
            A(f"algorithm={_ALGORITHMS[pc.algorithm] if pc.algorithm < len(_ALGORITHMS) else pc.algorithm}")
    if op == "compare":
        A(f"direction={ins.comparison_direction}")
        if ins.comparison_type in ("TOTALORDER", "PARTIALORDER"):
            A(f"type={ins.comparison_type}")
    if op == "gather":
        g = ins.gather_dimension_numbers
        A(f"offset_dims={_ints(g.offset_dims)}, collapsed_slice_dims={_ints(g.collapsed_slice_dims)}, "
          f"start_index_map={_ints(g.start_index_map)}")
        if g.operand_batching_dims:
            A(f"operand_batching_dims={_ints(g.operand_batching_dims)}")
        if g.start_indices_batching_dims:
            A(f"start_indices_batching_dims={_ints(g.start_indices_batching_dims)}")
        A(f"index_vector_dim={g.index_vector_dim}, slice_sizes={_ints(ins.gather_slice_sizes)}")
    if op == "scatter":
        s = ins.scatter_dimension_numbers
        A(f"update_window_dims={_ints(s.update_window_dims)}, inserted_window_dims={_ints(s.inserted_window_dims)}, "
          f"scatter_dims_to_operand_dims={_ints(s.scatter_dims_to_operand_dims)}")
        if s.input_batching_dims:
            A(f"input_batching_dims={_ints(s.input_batching_dims)}")
        if s.scatter_indices_batching_dims:
            A(f"scatter_indices_batching_dims={_ints(s.scatter_indices_batching_dims)}")
        A(f"index_vector_dim={s.index_vector_dim}")
    if ins.indices_are_sorted:
        A("indices_are_sorted=true")
    if ins.unique_indices:
        A("unique_indices=true")
    if op == "fft":
        A(f"fft_type={_FFT.get(ins.fft_type, ins.fft_type)}, fft_length={_ints(ins.fft_length)}")
    if op == "triangular-solve":
        t = ins.triangular_solve_options
        A(f"left_side={'true' if t.left_side else 'false'}, lower={'true' if t.lower else 'false'}, "
          f"unit_diagonal={'true' if t.unit_diagonal else 'false'}, "
          f"transpose_a={_TRANSPOSE.get(t.transpose_a, 'NO_TRANSPOSE')}")
    if op == "cholesky":
        A(f"lower={'true' if ins.cholesky_options.lower else 'false'}")
    if op == "reduce-precision":
        A(f"exponent_bits={ins.exponent_bits}, mantissa_bits={ins.mantissa_bits}")
    if op.startswith("batch-norm"):
        A(f"epsilon={repr(float(ins.epsilon))}, feature_index={ins.feature_index}")
    if op == "rng":
        A(f"distribution={'rng_uniform' if ins.distribution == 1 else 'rng_normal'}")
    if op == "rng-bit-generator":
        A("algorithm=" + {0: "rng_default", 1: "rng_three_fry", 2: "rng_philox"}.get(ins.rng_algorithm, "rng_default"))
    if op == "sort" and ins.is_stable:
        A("is_stable=true")
    if op == "topk":
        A(f"k={ins.k}, largest={'true' if ins.largest else 'false'}")
    if op == "scan":
        if ins.is_reverse:
            A("is_reverse=true")
        A(f"num_carries={ins.num_carries}")
    # called computations
    if op == "fusion":
        A(f"kind={ins.fusion_kind}, calls={called[0]}")
    elif op == "while":
        A(f"condition={called[1]}, body={called[0]}")  # the proto lists the body first
    elif op == "conditional":
        pred = shapes.get(ins.operand_ids[0]) == 1 if ins.operand_ids else False
        if pred and len(called) == 2:
            A(f"true_computation={called[0]}, false_computation={called[1]}")
        else:
            A("branch_computations={" + ", ".join(called) + "}")
    elif op == "select-and-scatter":
        A(f"select={called[0]}, scatter={called[1]}")
    elif op in _TO_APPLY_OPS and called:
        A(f"to_apply={called[0]}")
    elif op == "custom-call":
        pass
    elif called:
        A(("calls=" + called[0]) if len(called) == 1 else ("calls={" + ", ".join(called) + "}"))
    if op == "custom-call":
        A(f"custom_call_target={_q(ins.custom_call_target)}")
        if called:
            A("called_computations={" + ", ".join(called) + "}")
        if ins.custom_call_has_side_effect:
            A("custom_call_has_side_effect=true")
        if ins.constrain_layout or ins.operand_shapes_with_layout:
            A("operand_layout_constraints={" + ", ".join(_shape_text(s) for s in ins.operand_shapes_with_layout)
              + "}")
        if ins.output_operand_aliasing:
            A("output_to_operand_aliasing={" + ", ".join(
                f"{_ints(a.output_shape_index)}: ({a.operand_index}, {_ints(a.operand_shape_index)})"
                for a in ins.output_operand_aliasing) + "}")
        if ins.custom_call_schedule:
            A(f"schedule={_SCHEDULE.get(ins.custom_call_schedule, ins.custom_call_schedule)}")
        if ins.custom_call_api_version not in (0, 1):
            A(f"api_version={_API.get(ins.custom_call_api_version, ins.custom_call_api_version)}")
    elif ins.constrain_layout:
        A("constrain_layout=true")
    if ins.channel_id:
        A(f"channel_id={ins.channel_id}")
    groups = list(ins.replica_groups) or list(ins.collective_device_list.replica_groups)
    if groups or (op.startswith(("all-", "reduce-scatter", "collective-")) and op != "all-reduce-done"):
        iota = ins.collective_device_list.iota_replica_group_list
        if not groups and iota.num_replica_groups:
            A(f"replica_groups=[{iota.num_replica_groups},{iota.num_devices_per_group}]<=["
              + ",".join(str(d) for d in iota.iota_reshape_dims) + "]"
              + ("T(" + ",".join(str(d) for d in iota.iota_transpose_perm) + ")"
                 if list(iota.iota_transpose_perm) not in ([], list(range(len(iota.iota_reshape_dims)))) else ""))
        elif op not in ("collective-permute", "collective-permute-start"):
            A("replica_groups={" + ",".join(_ints(g.replica_ids) for g in groups) + "}")
    if ins.source_target_pairs:
        A("source_target_pairs={" + ",".join(f"{{{p.source},{p.target}}}" for p in ins.source_target_pairs) + "}")
    if ins.use_global_device_ids:
        A("use_global_device_ids=true")
    if ins.is_host_transfer:
        A("is_host_transfer=true")
    if op == "infeed" and ins.infeed_config:
        A(f"infeed_config={_q(ins.infeed_config.decode('utf-8', 'replace'))}")
    if op == "outfeed":
        if ins.HasField("outfeed_shape"):
            A(f"outfeed_shape={_shape_text(ins.outfeed_shape)}")
        if ins.outfeed_config:
            A(f"outfeed_config={_q(ins.outfeed_config.decode('utf-8', 'replace'))}")
    if ins.async_execution_thread and ins.async_execution_thread != "main":
        A(f"async_execution_thread={_q(ins.async_execution_thread)}")
    if op == "parameter" and ins.HasField("parameter_replication"):
        A("parameter_replication={" + ",".join("true" if b else "false"
                                               for b in ins.parameter_replication.replicated_at_leaf_buffers) + "}")
    if ins.HasField("sharding"):
        A(f"sharding={_sharding_text(ins.sharding)}")
    if ins.control_predecessor_ids:
        A("control-predecessors={" + ", ".join(f"%{names[i]}" for i in ins.control_predecessor_ids) + "}")
    if ins.HasField("frontend_attributes") and ins.frontend_attributes.map:
        A(f"frontend_attributes={_frontend_text(ins.frontend_attributes)}")
    if ins.is_composite:
        A("is_composite=true")
    if ins.HasField("result_accuracy"):
        ra = ins.result_accuracy
        if ra.HasField("tolerance"):
            t = ra.tolerance
            A(f"result_accuracy={{tolerance={{atol={t.atol!r},rtol={t.rtol!r},ulps={t.ulps}}}}}")
        elif ra.mode == 1:
            A("result_accuracy={mode=highest}")
    if ins.HasField("metadata") and ins.metadata.ListFields():
        A(f"metadata={_metadata_text(ins.metadata)}")
    if ins.backend_config:
        cfg = ins.backend_config.decode("utf-8", "replace")
        A(f"backend_config={cfg}" if cfg.startswith("{") else f"backend_config={_q(cfg)}")
    head = f"%{ins.name} = {_shape_text(ins.shape)} {op}({body})"
    return head + "".join(", " + a for a in attrs)


def _alias_text(io) -> str:
    kinds = {0: "may-alias", 1: "may-alias", 2: "must-alias"}
    return "{ " + ", ".join(
        f"{_ints(e.output_shape_index)}: ({e.parameter_number}, {_ints(e.parameter_shape_index)}"
        + (f", {kinds[e.kind]}" if e.kind == 2 else "") + ")" for e in io.entries) + " }"


def module_text(mp, filename: str = "<proto>") -> str:
    """HLO text of an HloModuleProto, in XLA's printing (then read by the ordinary parser)."""
    comps = {c.id: c.name for c in mp.computations}
    header = [f"HloModule {mp.name}"]
    if mp.HasField("schedule") and mp.schedule.sequences:
        header.append("is_scheduled=true")
    if mp.HasField("input_output_alias") and mp.input_output_alias.entries:
        header.append(f"input_output_alias={_alias_text(mp.input_output_alias)}")
    if mp.HasField("buffer_donor") and mp.buffer_donor.entries:
        header.append("buffer_donor={ " + ", ".join(f"({e.parameter_number}, {_ints(e.parameter_shape_index)})"
                                                    for e in mp.buffer_donor.entries) + " }")
    if mp.HasField("host_program_shape"):
        ps = mp.host_program_shape
        header.append("entry_computation_layout={(" + ", ".join(_shape_text(s) for s in ps.parameters) + ")->"
                      + _shape_text(ps.result) + "}")
    if mp.HasField("frontend_attributes") and mp.frontend_attributes.map:
        header.append(f"frontend_attributes={_frontend_text(mp.frontend_attributes)}")
    out = [", ".join(header), ""]
    sfi = mp.stack_frame_index
    if mp.HasField("stack_frame_index") and sfi.stack_frames:
        out.append("FileNames")
        out += [f"{k} {_q(n)}" for k, n in enumerate(sfi.file_names, 1)]
        out += ["", "FunctionNames"]
        out += [f"{k} {_q(n)}" for k, n in enumerate(sfi.function_names, 1)]
        out += ["", "FileLocations"]
        out += [f"{k} {{file_name_id={x.file_name_id} function_name_id={x.function_name_id} line={x.line} "
                f"end_line={x.end_line} column={x.column} end_column={x.end_column}}}"
                for k, x in enumerate(sfi.file_locations, 1)]
        out += ["", "StackFrames"]
        # XLA's text shows parent_frame_id one above the proto's field (0, no parent, prints as 1)
        out += [f"{k} {{file_location_id={x.file_location_id} parent_frame_id={x.parent_frame_id + 1}}}"
                for k, x in enumerate(sfi.stack_frames, 1)]
        out += ["", ""]
    entry_id = mp.entry_computation_id
    if not any(c.id == entry_id for c in mp.computations):
        entry_id = next((c.id for c in mp.computations if c.name == mp.entry_computation_name),
                        mp.computations[-1].id)
    sequences = {e.key: list(e.value.instruction_ids) for e in mp.schedule.sequences} \
        if mp.HasField("schedule") else {}
    # The proto's order of computations and instructions is the one XLA prints (a scheduled module's
    # instructions: its schedule); XLA's text of some scheduled modules lists computations in another order.
    for c in mp.computations:
        names = {i.id: i.name for i in c.instructions}
        shapes = {i.id: i.shape.element_type for i in c.instructions}
        prefix = "ENTRY " if c.id == entry_id else ""
        lines = [f"{prefix}%{c.name} {{"]
        instructions = list(c.instructions)
        seq = sequences.get(c.id)
        if seq and sorted(seq) == sorted(names):  # a scheduled module prints in its schedule's order
            by_id = {i.id: i for i in instructions}
            instructions = [by_id[i] for i in seq]
        for ins in instructions:
            try:
                text = _instruction_text(ins, names, comps, shapes, filename)
            except (KeyError, IndexError) as e:
                raise HloError(f"instruction '{ins.name}' ({ins.opcode}) in computation '{c.name}' refers to "
                               f"an unknown id ({e})", filename=filename) from None
            lines.append(("  ROOT " if ins.id == c.root_id else "  ") + text)
        lines.append("}" + (f", execution_thread={_q(c.execution_thread)}"
                            if c.execution_thread and c.execution_thread != "main" else ""))
        out += lines + [""]
    return "\n".join(out)
