"""The typed IR of an HLO module: shapes, layouts, literals, attribute values, instructions.

Everything here is plain data.  Equality ignores source locations, so `parse(print(m)) == m` is a
meaningful test.  Values of attributes are decoded per the opcode table (hlo_interp/opcodes.py) by
syntax/attributes.py; an attribute the table does not know is kept as its generic syntax tree (the `G*` classes below) and is
printed back as written.
"""
from __future__ import annotations

import re
from dataclasses import field
from functools import partial
from itertools import compress
from operator import attrgetter, eq
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from .records import record
from .types import PrimitiveType

if TYPE_CHECKING:
    import numpy as np

UNBOUNDED = -1  # the size of a `?` dimension
TILE_COMBINE = -(2**63)  # the `*` entry of a tile (XLA's kCombineDimension)


# --------------------------------------------------------------------------------------------------
# Shapes and layouts

@record(frozen=True)
class Layout:
    minor_to_major: tuple[int, ...] = ()
    dim_level_types: Optional[str] = None  # the raw `D(...)` item
    tiles: tuple[tuple[int, ...], ...] = ()
    tail_padding_alignment: Optional[int] = None  # L(n), in elements
    index_type: Optional[PrimitiveType] = None  # #(u32)
    pointer_type: Optional[PrimitiveType] = None  # *(u32)
    element_size_bits: Optional[int] = None  # E(n)
    memory_space: Optional[int] = None  # S(n)
    split_configs: tuple[tuple[int, tuple[int, ...]], ...] = ()  # SC(d:i,..)(d:i,..)
    physical_shape: Optional["Shape"] = None  # P(shape)
    dynamic_prefix_bytes: Optional[int] = None  # M(n)

    @property
    def has_extras(self) -> bool:
        return any(
            v not in (None, ())
            for v in (self.dim_level_types, self.tiles, self.tail_padding_alignment, self.index_type,
                      self.pointer_type, self.element_size_bits, self.memory_space,
                      self.split_configs, self.physical_shape, self.dynamic_prefix_bytes))

    def __str__(self) -> str:
        return layout_text(self)


@record(frozen=True)
class ArrayShape:
    element_type: PrimitiveType
    dims: tuple[int, ...] = ()
    dynamic: tuple[bool, ...] = ()  # per dimension: `<=N` or `?`
    layout: Optional[Layout] = None

    is_tuple = False

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def is_token(self) -> bool:
        return self.element_type.kind == "token"

    def num_elements(self) -> int:
        n = 1
        for d in self.dims:
            n *= max(d, 0)
        return n

    def text(self, layouts: bool = True) -> str:
        """The shape as HLO text writes it: `f32[4,<=3]{1,0}`; `layouts=False` drops the layout
        (XLA's ShapeUtil::HumanString)."""
        return shape_text(self, layouts)

    __str__ = text


@record(frozen=True)
class TupleShape:
    elements: tuple["Shape", ...] = ()

    is_tuple = True

    def text(self, layouts: bool = True) -> str:
        """`(f32[4]{0}, s32[])`, with a `/*index=5*/` marker before every fifth element."""
        return shape_text(self, layouts)

    __str__ = text


@record(frozen=True)
class BufferShape:
    """`b(shape)`: a buffer type."""
    element: "Shape"

    is_tuple = False

    def text(self, layouts: bool = True) -> str:
        return shape_text(self, layouts)

    __str__ = text


Shape = Union[ArrayShape, TupleShape, BufferShape]


def _dims_text(shape: ArrayShape) -> str:
    parts = []
    dyn = shape.dynamic
    for i, d in enumerate(shape.dims):
        if d == UNBOUNDED and dyn and dyn[i]:
            parts.append("?")
        elif dyn and dyn[i]:
            parts.append(f"<={d}")
        else:
            parts.append(str(d))
    return ",".join(parts)


def layout_text(lay: Layout) -> str:
    """`{1,0:T(8,128)S(1)}`: a layout as HLO text writes it after a shape (`str(layout)`)."""
    s = ",".join(str(d) for d in lay.minor_to_major)
    extras = []
    if lay.dim_level_types is not None:
        extras.append(lay.dim_level_types)
    if lay.tiles:
        extras.append("T" + "".join(
            "(" + ",".join("*" if d == TILE_COMBINE else str(d) for d in t) + ")" for t in lay.tiles))
    if lay.tail_padding_alignment is not None:
        extras.append(f"L({lay.tail_padding_alignment})")
    if lay.index_type is not None:
        extras.append(f"#({lay.index_type.name})")
    if lay.pointer_type is not None:
        extras.append(f"*({lay.pointer_type.name})")
    if lay.element_size_bits is not None:
        extras.append(f"E({lay.element_size_bits})")
    if lay.memory_space is not None:
        extras.append(f"S({lay.memory_space})")
    if lay.split_configs:
        extras.append("SC" + "".join(f"({d}:{','.join(str(i) for i in idx)})"
                                     for d, idx in lay.split_configs))
    if lay.physical_shape is not None:
        extras.append(f"P({shape_text(lay.physical_shape)})")
    if lay.dynamic_prefix_bytes is not None:
        extras.append(f"M({lay.dynamic_prefix_bytes})")
    if extras:
        s += ":" + "".join(extras)
    return "{" + s + "}"


def shape_text(shape: Shape, layouts: bool = True) -> str:
    """The one text form of a shape (also `str(shape)` and `shape.text(layouts)`): as XLA prints it,
    with the layout unless `layouts=False` (then XLA's ShapeUtil::HumanString), and a `/*index=5*/`
    marker before every fifth element of a tuple.  A layout is printed when the shape has dimensions
    or the layout has more than its minor-to-major order."""
    if isinstance(shape, TupleShape):
        parts = []
        for i, s in enumerate(shape.elements):
            t = shape_text(s, layouts)
            if i and i % 5 == 0:
                t = f"/*index={i}*/" + t
            parts.append(t)
        return "(" + ", ".join(parts) + ")"
    if isinstance(shape, BufferShape):
        return f"b({shape_text(shape.element, layouts)})"
    s = f"{shape.element_type.name}[{_dims_text(shape)}]"
    lay = shape.layout
    if layouts and lay is not None and (shape.dims or lay.has_extras):
        s += layout_text(lay)
    return s


def default_layout(shape: ArrayShape) -> Layout:
    return Layout(tuple(range(shape.rank - 1, -1, -1)))


def with_default_layouts(shape: Shape) -> Shape:
    """Fill missing layouts with the default (major-to-minor) one, as XLA's parser does."""
    if isinstance(shape, TupleShape):
        return TupleShape(tuple(with_default_layouts(s) for s in shape.elements))
    if isinstance(shape, BufferShape):
        return BufferShape(with_default_layouts(shape.element))
    if shape.layout is None and shape.element_type.is_array_type:
        return ArrayShape(shape.element_type, shape.dims, shape.dynamic, default_layout(shape))
    return shape


# --------------------------------------------------------------------------------------------------
# Literals

class Literal:
    """The value of a constant.  `value` is an ndarray (array shapes; ml_dtypes for the types NumPy
    lacks), a tuple of Literals (tuple shapes), or None when the text elided it as `{...}`.

    The parser may hand over a dense array's elements as a flat list of Python numbers already
    converted to the element type (`flat`); the ndarray is then made on first use of `value`, so that
    printing and checking never import NumPy."""
    __slots__ = ("shape", "_value", "flat")

    def __init__(self, shape: Shape, value: Union["np.ndarray", tuple["Literal", ...], None],
                 flat: Optional[list] = None):
        self.shape = shape
        self._value = value
        self.flat = flat  # row-major Python ints/floats/bools of an array literal, when value is pending

    @classmethod
    def from_flat(cls, shape: "ArrayShape", flat: list) -> "Literal":
        """An array literal from its row-major elements (Python numbers exactly representable in
        the element type); the ndarray is built when first asked for."""
        return cls(shape, None, flat)

    @property
    def value(self):
        v = self._value
        if v is None and self.flat is not None:
            v = self._value = _flat_to_array(self.flat, self.shape)
            self.flat = None  # one source of truth from now on
        return v

    @value.setter
    def value(self, v) -> None:
        self._value = v
        self.flat = None

    @property
    def elided(self) -> bool:
        return self._value is None and self.flat is None

    def __repr__(self) -> str:
        return f"Literal(shape={self.shape!r}, value={self.value!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Literal) or self.shape != other.shape:
            return False
        if self.flat is not None and other.flat is not None and \
                self.shape.element_type.kind in ("sint", "uint", "pred"):
            return self.flat == other.flat
        a, b = self.value, other.value
        if a is None or b is None:
            return a is b
        if isinstance(a, tuple):
            return isinstance(b, tuple) and a == b
        import numpy as np
        if not isinstance(b, np.ndarray) or a.shape != b.shape or a.dtype != b.dtype:
            return False
        # Bitwise, so that NaN payloads and -0 count.
        return a.tobytes() == b.tobytes()

    __hash__ = None  # type: ignore[assignment]


def _flat_to_array(flat: list, shape: "ArrayShape"):
    import numpy as np
    et = shape.element_type
    if et.kind in ("sint", "uint") and et.bits == 64:
        arr = np.array([v & 0xFFFFFFFFFFFFFFFF for v in flat], dtype=np.uint64).view(et.dtype)
    elif et.kind in ("sint", "uint"):
        arr = np.array(flat, dtype=np.int64).astype(et.dtype)
    else:
        arr = np.array(flat, dtype=np.float64 if et.kind == "float" else np.bool_).astype(et.dtype)
    return arr.reshape(shape.dims)


# --------------------------------------------------------------------------------------------------
# Generic attribute syntax (what the grammar yields before the opcode schema decodes it)

@record(frozen=True)
class GName:
    """A bare word: a computation or instruction name, an enum value (`kLoop`, `LT`)."""
    text: str


@record(frozen=True)
class GString:
    """A quoted string, unescaped (`quote` remembers ' or " for printing)."""
    text: str
    quote: str = field(default='"', compare=False)


@record(frozen=True)
class GRaw:
    """A token kept verbatim: `3x3`, `0_0x1_1`, `b01f_01io->b01f`, JSON dicts, floats as written."""
    kind: str  # "dxd", "pad", "dim_labels", "sparsity", "json", "float"
    text: str


@record(frozen=True)
class GBraces:
    items: tuple[Any, ...]
    commas: tuple[bool, ...] = ()  # separator before item i+1 was a comma


@record(frozen=True)
class GBrackets:
    items: tuple[Any, ...]


@record(frozen=True)
class GKeyVal:
    key: str
    value: Any  # None for `key=` with nothing after it


@record(frozen=True)
class GSliceRange:
    parts: tuple[int, ...]  # [start:limit(:stride)]


@record(frozen=True)
class GIotaList:
    """`[2,4]<=[8]T(1,0)`"""
    dims: tuple[int, ...]
    reshape_dims: tuple[int, ...]
    transpose: Optional[tuple[int, ...]]


@record(frozen=True)
class GProgramShape:
    params: tuple[Shape, ...]
    result: Shape


@record(frozen=True)
class GAliasEntry:
    """`{0}: (0, {}, may-alias)` in aliasing configs; index None for buffer_donor's bare tuple."""
    output_index: Optional[tuple[int, ...]]
    param_number: int
    param_index: tuple[int, ...]
    kind: Optional[str]


@record(frozen=True)
class GMesh:
    """`mesh['a'=2,'b'=4] {'a'}`: a named device mesh, optionally followed by an axes list."""
    name: str
    brackets: GBrackets
    axes: Optional[GBraces] = None


@record(frozen=True)
class GParen:
    """`(0, {}, may-alias)`, `(0,2,4,6)`, `([2,2,2]T(0,2,1)) {'a':(2)2}`."""
    items: tuple[Any, ...]
    axes: Optional[GBraces] = None


@record(frozen=True)
class GColonPair:
    """`{"a"} : {"b"}` (origin_recovery_table entries)."""
    left: Any
    right: Any


@record(frozen=True)
class GShapedValue:
    """`s32[2]{0} {1, 2}`: a shape followed by a literal-like brace list (custom-call literal=)."""
    shape: "Shape"
    value: Any  # GBraces, int, bool or GRaw float


@record(frozen=True)
class GParenIota:
    """`[2,2,2]T(0,2,1)` inside a device list."""
    dims: tuple[int, ...]
    transpose: Optional[tuple[int, ...]]


@record(frozen=True)
class GSubAxis:
    """`'b':(2)2`: a sub-axis of a mesh axis."""
    name: GString
    pre: GParen
    size: int


@record(frozen=True)
class GUnknownDim:
    pass


@record(frozen=True)
class Window:
    dims: tuple["WindowDim", ...]


@record(frozen=True)
class WindowDim:
    size: int = 1
    stride: int = 1
    pad_low: int = 0
    pad_high: int = 0
    lhs_dilate: int = 1
    rhs_dilate: int = 1
    reversal: bool = False


@record(frozen=True)
class PaddingDim:
    low: int
    high: int
    interior: int = 0


@record(frozen=True)
class SliceDim:
    start: int
    limit: int
    stride: int = 1


@record(frozen=True)
class ConvDims:
    """dim_labels `b01f_01io->b01f`, decoded."""
    text: str
    input_batch: int
    input_feature: int
    input_spatial: tuple[int, ...]
    kernel_input_feature: int
    kernel_output_feature: int
    kernel_spatial: tuple[int, ...]
    output_batch: int
    output_feature: int
    output_spatial: tuple[int, ...]


@record(frozen=True)
class ReplicaGroups:
    """Either explicit groups ({{0,1},{2,3}}) or an iota list ([2,4]<=[8]T(1,0))."""
    groups: Optional[tuple[tuple[int, ...], ...]] = None
    iota: Optional[GIotaList] = None
    mesh: Optional[GMesh] = None  # replica_groups=mesh[...] {...} (mesh-axes device lists)

    def expand(self) -> tuple[tuple[int, ...], ...]:
        if self.groups is not None:
            return self.groups
        import numpy as np
        it = self.iota
        ids = np.arange(int(np.prod(it.reshape_dims)), dtype=np.int64).reshape(it.reshape_dims)
        if it.transpose is not None:
            ids = ids.transpose(it.transpose)
        ids = ids.reshape(it.dims)
        return tuple(tuple(int(x) for x in row) for row in ids)


# --------------------------------------------------------------------------------------------------
# Module structure

class Location:
    """A place in the source text (`source`, a diagnostics.SourceText); line and column are worked out
    only when asked for."""
    __slots__ = ("source", "offset", "_lc")

    def __init__(self, source, offset: int):
        self.source = source
        self.offset = offset
        self._lc = None

    def _get(self):
        if self._lc is None:
            self._lc = self.source.line_col(self.offset)
        return self._lc

    @property
    def line(self) -> int:
        return self._get()[0]

    @property
    def column(self) -> int:
        return self._get()[1]

    @property
    def source_line(self) -> str:
        return self.source.line_text(self.line)

    @property
    def filename(self) -> str:
        return self.source.filename

    @property
    def source_text(self) -> str:
        """The whole text this location is in."""
        return self.source.text

    def __repr__(self):
        return f"Location({self.line}:{self.column})"


@record(eq=False)
class Instruction:
    name: str
    opcode: str
    shape: Optional[Shape]
    operands: list[str] = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)  # decoded, in canonical order
    literal: Optional[Literal] = None  # constant
    parameter_number: Optional[int] = None  # parameter
    is_root: bool = False
    loc: Optional[Location] = None
    attr_locs: dict[str, Location] = field(default_factory=dict)
    unknown_attrs: tuple[str, ...] = ()  # names of attrs the opcode table does not know
    operand_shapes: Optional[list] = None  # shapes written before operand names, when any
    # Where each operand is written (offsets in loc's source: the name, or a nested instruction's
    # opcode); () when the instruction was not parsed.  The parser may record just the start of a
    # plain `%a, %b` list (an int, what most instructions of a dump have): resolved when first asked.
    operand_offsets: Union[tuple[int, ...], int] = ()

    def operand_loc(self, k: int) -> Optional[Location]:
        """Where operand k is written, when the instruction was parsed."""
        offsets = self.operand_offsets
        if self.loc is None:
            return None
        if isinstance(offsets, int):
            offsets = self.operand_offsets = _name_list_offsets(self.loc.source.text, offsets, len(self.operands))
        return Location(self.loc.source, offsets[k]) if k < len(offsets) else None

    def _key(self):
        return (self.name, self.opcode, self.shape, tuple(self.operands), self.attrs, self.literal,
                self.parameter_number, self.is_root)

    def __eq__(self, other):
        return isinstance(other, Instruction) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self):
        return f"<Instruction {self.name} = {self.opcode}({', '.join(self.operands)})>"

    # The parser's fast path may leave the `metadata={...}` text undecoded (`pending_metadata`, with
    # None at "metadata" in the dict, keeping its place): `attrs` decodes it on first access.  Printing
    # re-emits such text as it is when it is already canonical (attrs_as_parsed).
    pending_metadata = None  # Optional[str]; not a field (no annotation): set by the parser
    # Set by the parser on an instruction whose source text (from `ROOT ` or the name, up to this
    # offset) is exactly what the printer writes for it; a printer told that the module is unchanged
    # since it was parsed may copy that text (syntax/printer.py, PrintOptions.reuse_source).
    canonical_end = None  # Optional[int]; not a field

    def attrs_as_parsed(self) -> tuple[dict[str, Any], Optional[str]]:
        """(attrs, pending metadata text) without decoding the metadata: while the text is pending,
        attrs["metadata"] is None.  For printers, and for readers that skip `metadata` (the verifier's
        and the cost analysis' signature keys, the call index); everyone else reads `attrs`.  Read only:
        while the text is pending, the dict may be shared by many instructions (`attrs` copies it)."""
        return self.__dict__["_attrs"], self.__dict__.get("pending_metadata")


def parsed_instruction(name: str, opcode: str, shape: Optional[Shape], operands: list[str], attrs: dict[str, Any],
                       literal: Optional[Literal], parameter_number: Optional[int], is_root: bool, loc: Location,
                       attr_offsets: Sequence[tuple], operand_offsets: Union[tuple[int, ...], int]) -> Instruction:
    """Instruction(name, opcode, ...) with the other fields at their defaults, as the parser's fast path
    makes a hundred thousand of them: the same object, its fields set at once (a quarter of the time
    of the dataclass's __init__; tests/test_parse_fast.py checks that the two agree).  Fields at their
    default are left to the class (a dict of at most 10 keys, the parser's two extras included, takes
    half the memory and time of one with every field): a reader of the instance dict (the verifier's
    loop) gets `is_root`, `literal`, `parameter_number`, `unknown_attrs` and `operand_shapes` with
    .get.  attr_locs is made when first read, from `attr_offsets`: (name, offset in loc's source, ...)
    per attribute."""
    ins = _new_object(Instruction)
    d = ins.__dict__ = {"name": name, "opcode": opcode, "shape": shape, "operands": operands, "_attrs": attrs,
                        "loc": loc, "_attr_offsets": attr_offsets, "operand_offsets": operand_offsets}
    if is_root:
        d["is_root"] = True
    if literal is not None:
        d["literal"] = literal
    if parameter_number is not None:
        d["parameter_number"] = parameter_number
    return ins


_new_object = object.__new__


def _attrs_get(self: Instruction) -> dict[str, Any]:
    d = self.__dict__
    if "pending_metadata" in d:
        attrs = d["_attrs"] = dict(d["_attrs"])  # (the parser shares one dict among pending instructions)
        attrs["metadata"] = metadata_from_text(d.pop("pending_metadata"))
    return d["_attrs"]


def _attrs_set(self: Instruction, value: dict[str, Any]) -> None:
    d = self.__dict__
    d["_attrs"] = value
    if "pending_metadata" in d:
        del d["pending_metadata"]


Instruction.attrs = property(_attrs_get, _attrs_set, doc="the attributes, decoded, in canonical order")


def _attr_locs_get(self: Instruction) -> dict[str, Location]:
    d = self.__dict__
    locs = d.get("_attr_locs")
    if locs is None:
        raw = d.pop("_attr_offsets", ())
        source = self.loc.source if raw else None
        locs = d["_attr_locs"] = {a[0]: Location(source, a[1]) for a in raw}
    return locs


def _attr_locs_set(self: Instruction, value: dict[str, Location]) -> None:
    d = self.__dict__
    d["_attr_locs"] = value
    if "_attr_offsets" in d:
        del d["_attr_offsets"]


Instruction.attr_locs = property(_attr_locs_get, _attr_locs_set, doc="where each attribute is written, by name")


def metadata_from_text(text: str) -> dict[str, Any]:
    """The metadata dict of a `{op_name="a" source_line=3}` text of key="string" (without escapes) or
    key=integer items, separated by a space or a comma (what the parser leaves pending)."""
    return {k: (s[1:-1] if s else int(i)) for k, s, i in _METADATA_ITEM.findall(text)}


_METADATA_ITEM = re.compile(r'([A-Za-z_][\w.-]*)=(?:("[^"\\\n]*")|(-?[0-9]+))')


def _name_list_offsets(text: str, start: int, n: int) -> tuple[int, ...]:
    """Where each of the n names of a plain `%a, %b` list starting at text[start] begins."""
    out = []
    k = start
    for _ in range(n):
        while text[k] in " \t":
            k += 1
        out.append(k)
        k = text.find(",", k) + 1
    return tuple(out)


_opcode_of = attrgetter("opcode")
_is_parameter = partial(eq, "parameter")


@record(eq=False)
class Computation:
    name: str
    instructions: list[Instruction]
    is_entry: bool = False
    params: Optional[list[tuple[str, Shape]]] = None  # the signature, when the text had one
    result_shape: Optional[Shape] = None  # the signature's result
    attrs: dict[str, Any] = field(default_factory=dict)  # execution_thread=...
    loc: Optional[Location] = None
    # Where the signature's parameters and result are written, when the text has a signature.
    param_locs: Optional[list[Location]] = None
    result_loc: Optional[Location] = None
    root_marked: Optional[bool] = None  # whether the text marks an instruction ROOT (None: not parsed)

    @property
    def root(self) -> Instruction:
        """The ROOT instruction (the last one when none is marked).  Every pass asks for it, often
        once per instruction: remembered, and recomputed only when the instruction list changed."""
        instrs = self.instructions
        cached = self.__dict__.get("_root")
        if cached is not None and cached[0] is instrs and cached[1] == len(instrs) and \
                instrs[cached[2]] is cached[3]:
            return cached[3]
        k = len(instrs) - 1
        if not instrs[k].is_root:
            k = next((i for i, ins in enumerate(instrs) if ins.is_root), k)
        self.__dict__["_root"] = (instrs, len(instrs), k, instrs[k])
        return instrs[k]

    def instruction(self, name: str) -> Instruction:
        for ins in self.instructions:
            if ins.name == name:
                return ins
        raise KeyError(name)

    def parameters(self) -> list[Instruction]:
        instrs = self.instructions
        ps = list(compress(instrs, map(_is_parameter, map(_opcode_of, instrs))))  # (a loop in C: 100k+ instructions)
        return sorted(ps, key=lambda i: i.parameter_number or 0)

    def _key(self):
        return (self.name, self.instructions, self.is_entry, self.attrs)

    def __eq__(self, other):
        return isinstance(other, Computation) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self):
        return f"<Computation {self.name}: {len(self.instructions)} instructions>"


@record(eq=False)
class StackFrameTables:
    file_names: list[tuple[int, str]] = field(default_factory=list)
    function_names: list[tuple[int, str]] = field(default_factory=list)
    file_locations: list[tuple[int, Any]] = field(default_factory=list)
    stack_frames: list[tuple[int, Any]] = field(default_factory=list)

    def __bool__(self):
        return bool(self.file_names or self.function_names or self.file_locations or self.stack_frames)

    def _key(self):
        return (self.file_names, self.function_names, self.file_locations, self.stack_frames)

    def __eq__(self, other):
        return isinstance(other, StackFrameTables) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]


@record(eq=False)
class Module:
    name: str
    computations: list[Computation]
    attrs: dict[str, Any] = field(default_factory=dict)  # header attributes, decoded
    stack_frames: StackFrameTables = field(default_factory=StackFrameTables)
    has_header: bool = True
    filename: Optional[str] = None
    loc: Optional[Location] = None  # the `HloModule` keyword
    attr_locs: dict[str, Location] = field(default_factory=dict)  # header attributes, by name
    # where entry_computation_layout's parameters and result are written
    entry_layout_param_locs: Optional[list[Location]] = None
    entry_layout_result_loc: Optional[Location] = None

    @property
    def entry(self) -> Computation:
        for c in self.computations:
            if c.is_entry:
                return c
        return self.computations[-1]

    def computation(self, name: str) -> Computation:
        for c in self.computations:
            if c.name == name:
                return c
        raise KeyError(name)

    def _key(self):
        return (self.name, self.computations, self.attrs, self.stack_frames)

    def __eq__(self, other):
        return isinstance(other, Module) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self):
        return f"<Module {self.name}: {len(self.computations)} computations>"

    def __str__(self):
        from .syntax.printer import to_text
        return to_text(self)


class gc_paused:
    """`with gc_paused():` -- the cyclic garbage collector off for a pass over the IR that allocates
    much and frees little (the verifier, the analyses of `hlo info`): each collection would walk every
    object of the module (millions for a 100k-instruction module), and nothing cyclic is freed anyway."""

    def __enter__(self):
        import gc
        self._was = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *exc):
        if self._was:
            import gc
            age_new_objects()
            gc.enable()
        return False


def age_new_objects() -> None:
    """Count every object made so far as old (the collector's oldest generation), e.g. after a pass
    that ran with the collector off: otherwise its next young collection walks all of them (millions
    for a 100k-instruction module) and moves them up one generation at a time, walking them again at
    each step.  gc.freeze + gc.unfreeze does that in constant time; nothing becomes uncollectable (a
    full collection still finds cyclic garbage).  Skipped when the program froze objects itself
    (unfreeze would release them)."""
    import gc
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
