"""The opcode table (and the walk that checks each entry's shape rule, kernel and README row) and the
typed decoding of attributes."""
import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import hlo_interp
from hlo_interp import ir
from hlo_interp.opcodes import OPCODES, VARIADIC, OpSpec

# XLA's xla/hlo/ir/hlo_opcode.h (HLO_OPCODE_LIST), by arity
XLA_OPCODES = {
    0: "constant iota parameter partition-id replica-id rng-get-and-update-state",
    1: "abs acos acosh all-gather-done all-reduce-done asin asinh async-done atan atanh bitcast "
       "bitcast-convert broadcast cbrt ceil cholesky count-leading-zeros collective-permute-done convert "
       "copy copy-done copy-start cosine cosh domain erf exponential exponential-minus-one fft floor "
       "get-dimension-size get-tuple-element imag infeed is-finite log log-plus-one logistic negate not "
       "opt-barrier popcnt real recv recv-done reduce-precision reshape reverse rng-bit-generator "
       "round-nearest-afz round-nearest-even rsqrt send-done shuffle sign sine sinh slice sqrt tan tanh "
       "topk transpose while",
    2: "add add-dependency and atan2 compare complex divide dot gather maximum minimum mulhi multiply or "
       "outfeed pad power remainder send set-dimension-size shift-left shift-right-arithmetic "
       "shift-right-logical stochastic-convert subtract triangular-solve xor",
    3: "batch-norm-training clamp ragged-dot select select-and-scatter",
    4: "scaled-dot",
    5: "batch-norm-grad batch-norm-inference",
    6: "ragged-all-to-all",
    VARIADIC: "after-all all-gather all-gather-start all-reduce all-reduce-start all-to-all async-start "
              "async-update call collective-broadcast collective-permute collective-permute-start "
              "collective-reduce concatenate conditional convolution custom-call dynamic-reshape "
              "dynamic-slice dynamic-update-slice fusion map reduce reduce-scatter reduce-window rng scan "
              "scatter sort tuple",
}


def test_table_has_xlas_136_opcodes_with_their_arity():
    expected = {name: arity for arity, names in XLA_OPCODES.items() for name in names.split()}
    assert len(expected) == 136
    assert {n: op.arity for n, op in OPCODES.items()} == expected


# --------------------------------------------------------------------------------------------------
# The table walk: what each entry promises (its shape rule's module, its kernel's module, its README
# row) the code keeps.  An opcode added to the table alone fails here, one line per missing piece.

ROOT = Path(__file__).resolve().parents[1]


def _opcode_table_tool():
    spec = importlib.util.spec_from_file_location("opcode_table", ROOT / "tools" / "opcode_table.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def table_walk_problems(table=None) -> list[str]:
    """One message per broken promise of the opcode table (empty when the code keeps them all)."""
    from hlo_interp.ops.registry import KERNELS
    from hlo_interp.shapes.infer import RULES
    table = OPCODES if table is None else table
    readme = (ROOT / "README.md").read_text()
    problems = []
    for name, spec in sorted(table.items()):
        for what, package, module, registry, how in (
                ("shape rule", "shapes", spec.rule_module, RULES, f"register({name!r}, rule)"),
                ("kernel", "ops", spec.kernel_module, KERNELS, f"@kernel({name!r})")):
            path = f"hlo_interp/{package}/{module}.py"
            if not module:
                if what == "kernel" and spec.no_kernel:
                    continue  # declared: it has none, and the entry says why
                problems.append(f"{name}: its entry names no {what} module"
                                + (" (nor, with no_kernel=, why it has none)" if what == "kernel" else ""))
                continue
            try:
                importlib.import_module(f"hlo_interp.{package}.{module}")
            except ModuleNotFoundError:
                problems.append(f"{name}: its entry names {path} for its {what}, which does not exist")
                continue
            fn = registry.get(name)
            if fn is None:
                problems.append(f"{name}: no {what}: {path} (named by its entry) registers none ({how})")
            elif fn.__module__ != f"hlo_interp.{package}.{module}" and \
                    not fn.__module__.startswith(f"hlo_interp.{package}.{module}."):  # (a package's module)
                problems.append(f"{name}: its {what} is {fn.__module__}.{fn.__name__}, but its entry names {path}")
        if f"| `{name}` |" not in readme:
            problems.append(f"{name}: no row in README.md's opcode table (run python3 tools/opcode_table.py)")
    # the verifier's checks of an opcode are registered beside its shape rule (else they would run
    # only once some other opcode had loaded their module)
    from hlo_interp.shapes.infer import CHECKS
    for module in {spec.rule_module for spec in table.values()}:
        try:
            importlib.import_module(f"hlo_interp.shapes.{module}")
        except ModuleNotFoundError:
            pass  # (said above)
    for (phase, name), fn in sorted(CHECKS.items()):
        spec = table.get(name)
        if spec is None or fn.__module__ != f"hlo_interp.shapes.{spec.rule_module}":
            problems.append(f"{name}: its verifier check ({phase}) {fn.__module__}.{fn.__name__} is not in the "
                            f"module its entry names for its shape rule")
    return problems


def test_every_opcode_has_its_shape_rule_kernel_and_readme_row():
    problems = table_walk_problems()
    assert not problems, "the opcode table and the code disagree:\n  " + "\n  ".join(problems)


def test_entries_are_well_formed():
    """The values an entry's fields take are the ones the code reads."""
    for name, spec in OPCODES.items():
        assert spec.name == name
        assert spec.types in ("", "float", "float|complex", "no-pred"), name
        assert spec.cost in ("", "free", "elementwise"), name
        assert not spec.transcendental or spec.cost == "elementwise", name
        assert not spec.async_done or (name.endswith("-start") and spec.async_done in OPCODES), name
        assert set(spec.label_attrs) <= set(spec.attr_names), name
        assert not (spec.foldable and spec.side_effect), name


def test_readme_opcode_table_is_generated_from_the_table():
    readme = (ROOT / "README.md").read_text()
    assert _opcode_table_tool().render(readme) == readme, \
        "README.md's opcode table is out of date: run python3 tools/opcode_table.py"
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "opcode_table.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def _half_added(monkeypatch, **fields):
    """The table with one more elementwise opcode, `frobnicate`, entered without anything else."""
    spec = OpSpec("frobnicate", 1, family="elementwise", rule_module="elementwise", kernel_module="elementwise",
                  **fields)
    monkeypatch.setitem(OPCODES, "frobnicate", spec)
    return spec


def test_a_half_added_opcode_fails_the_walk_with_one_line_per_missing_piece(monkeypatch):
    _half_added(monkeypatch)
    problems = [p for p in table_walk_problems() if p.startswith("frobnicate")]
    assert problems == [
        "frobnicate: no shape rule: hlo_interp/shapes/elementwise.py (named by its entry) registers none "
        "(register('frobnicate', rule))",
        "frobnicate: no kernel: hlo_interp/ops/elementwise.py (named by its entry) registers none "
        "(@kernel('frobnicate'))",
        "frobnicate: no row in README.md's opcode table (run python3 tools/opcode_table.py)"]
    monkeypatch.setitem(OPCODES, "frobnicate", OpSpec("frobnicate", 1, family="elementwise", rule_module="nowhere"))
    assert [p for p in table_walk_problems() if p.startswith("frobnicate")][:2] == [
        "frobnicate: its entry names hlo_interp/shapes/nowhere.py for its shape rule, which does not exist",
        "frobnicate: its entry names no kernel module (nor, with no_kernel=, why it has none)"]
    # declared without a kernel, with the reason: no kernel problem
    monkeypatch.setitem(OPCODES, "frobnicate", OpSpec("frobnicate", 1, family="elementwise",
                                                      rule_module="elementwise", no_kernel="not run yet"))
    assert not any("kernel" in p for p in table_walk_problems() if p.startswith("frobnicate"))


def test_a_half_added_opcode_is_a_located_check_finding_and_run_error(monkeypatch, tmp_path):
    """`hlo check` and hlo_interp.run on a module using an opcode that has an entry and nothing else:
    located messages, no traceback."""
    from click.testing import CliRunner
    from hlo_interp.cli import main
    _half_added(monkeypatch, parser_infers=True)
    path = tmp_path / "m.hlo"
    path.write_text("HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT f = f32[2] frobnicate(p)\n}\n")
    r = CliRunner().invoke(main, ["check", str(path)])
    assert r.exit_code == 1, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert f"{path}:5:8: error[E102]: frobnicate has no shape rule: its entry in the opcode table names " \
           "hlo_interp/shapes/elementwise.py, which registers none for it" in r.output, r.output
    monkeypatch.setitem(OPCODES, "frobnicate", OpSpec("frobnicate", 1, family="elementwise", rule_module="nowhere"))
    r = CliRunner().invoke(main, ["check", str(path)])
    assert r.exit_code == 1 and (r.exception is None or isinstance(r.exception, SystemExit)), r.output
    assert f"{path}:5:8: error[E102]: frobnicate has no shape rule: its entry in the opcode table names " \
           "hlo_interp/shapes/nowhere.py, which does not exist" in r.output, r.output
    _half_added(monkeypatch, parser_infers=True)
    # the parser's fill-in of an omitted shape: a located parse error
    from hlo_interp.shapes import infer
    monkeypatch.setattr(infer, "PARSER_CAN_INFER", infer.PARSER_CAN_INFER | {"frobnicate"})
    with pytest.raises(hlo_interp.HloError, match=r"^<string>:5:8: error: failed to infer shape for opcode: frobnicate, error: frobnicate has no shape rule"):
        hlo_interp.parse("HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT f = frobnicate(p)\n}\n")
    import numpy as np
    with pytest.raises(hlo_interp.HloError, match=r"unsupported opcode 'frobnicate' \(line 5\)"):
        hlo_interp.run(path.read_text(), np.zeros(2, np.float32))


def instr(line: str, extra: str = "") -> ir.Instruction:
    m = hlo_interp.parse("HloModule m\n" + extra + "ENTRY e {\n  " + line + "\n}\n")
    return m.entry.root


def test_window_padding_slice_dim_labels():
    ins = instr("ROOT c = f32[1,8,8,4] convolution(f32[1,9,9,3] a, f32[3,3,3,4] b), "
                "window={size=3x3 stride=2x1 pad=0_1x1_1 rhs_dilate=1x2 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f")
    w = ins.attrs["window"]
    assert [d.size for d in w.dims] == [3, 3]
    assert [(d.stride, d.pad_low, d.pad_high, d.rhs_dilate, d.reversal) for d in w.dims] == [
        (2, 0, 1, 1, False), (1, 1, 1, 2, True)]
    dl = ins.attrs["dim_labels"]
    assert (dl.input_batch, dl.input_feature, dl.input_spatial) == (0, 3, (1, 2))
    assert (dl.kernel_input_feature, dl.kernel_output_feature, dl.kernel_spatial) == (2, 3, (0, 1))
    p = instr("ROOT p = f32[9] pad(f32[4] a, f32[] z), padding=-1_2_1").attrs["padding"]
    assert p == (ir.PaddingDim(-1, 2, 1),)
    s = instr("ROOT s = f32[2,3] slice(f32[4,6] a), slice={[1:3], [0:6:2]}").attrs["slice"]
    assert s == (ir.SliceDim(1, 3, 1), ir.SliceDim(0, 6, 2))


def test_replica_groups_both_forms_expand_the_same():
    add = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n"
    a = instr("ROOT r = f32[4] all-reduce(f32[4] p), replica_groups=[2,4]<=[4,2]T(1,0), to_apply=add", add)
    b = instr("ROOT r = f32[4] all-reduce(f32[4] p), replica_groups={{0,2,4,6},{1,3,5,7}}, to_apply=add", add)
    assert a.attrs["replica_groups"].expand() == b.attrs["replica_groups"].expand() == (
        (0, 2, 4, 6), (1, 3, 5, 7))


def test_dot_and_gather_dimension_numbers():
    d = instr("ROOT d = f32[2,3,5] dot(f32[2,3,4] a, f32[2,4,5] b), lhs_batch_dims={0}, "
              "lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, "
              "operand_precision={highest,default}")
    assert d.attrs["lhs_contracting_dims"] == (2,) and d.attrs["operand_precision"] == ("highest", "default")
    g = instr("ROOT g = f32[2,4] gather(f32[8,4] x, s32[2,1] i), offset_dims={1}, collapsed_slice_dims={0}, "
              "start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}, indices_are_sorted=true")
    assert (g.attrs["slice_sizes"], g.attrs["index_vector_dim"], g.attrs["indices_are_sorted"]) == ((1, 4), 1, True)


def test_common_attributes_decoded():
    ins = instr('ROOT a = f32[2] add(f32[2] x, f32[2] y), sharding={devices=[2]0,1}, '
                'frontend_attributes={b="1",a="2"}, metadata={op_type="Add" op_name="jit(f)/add" source_line=3}, '
                'backend_config={"k": [1, 2]}')
    assert ins.attrs["metadata"] == {"op_type": "Add", "op_name": "jit(f)/add", "source_line": 3}
    assert ins.attrs["frontend_attributes"] == {"b": "1", "a": "2"}
    assert ins.attrs["backend_config"].text == '{"k": [1, 2]}'
    text = hlo_interp.to_text(hlo_interp.parse(hlo_interp.to_text(instr_module := hlo_interp.parse(
        "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT a = f32[2] add(x, x), "
        'frontend_attributes={b="1",a="2"}\n}\n'))))
    assert 'frontend_attributes={a="2",b="1"}' in text  # XLA sorts the keys
    assert instr_module is not None


@pytest.mark.parametrize("attr,bad", [("index", "{0}"), ("dimensions", "0"), ("to_apply", '"add"'),
                                      ("slice", "{0:1}"), ("window", "{stride=2}")])
def test_wrong_attribute_forms_are_located_errors(attr, bad):
    op = {"index": "get-tuple-element", "dimensions": "reverse", "to_apply": "reduce",
          "slice": "slice", "window": "reduce-window"}[attr]
    with pytest.raises(hlo_interp.HloError) as ei:
        instr(f"ROOT r = f32[2] {op}(f32[2] x), {attr}={bad}")
    assert ei.value.line == 3
