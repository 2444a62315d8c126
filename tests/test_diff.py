"""`hlo diff` and hlo_interp.diff on pairs of real XLA dumps (tests/data/diff/, made by
tools/make_diff_pairs.py with JAX): renumbered twins, a real fusion change, a changed constant, an added
op, reordering, layouts, the JSON/HTML reports, exit codes and standard input."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

import hlo_interp
from hlo_interp.cli import main as hlo_main
from hlo_interp.diff import diff_modules, normalize_ignore

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "diff"
CORPUS = ROOT / "tests" / "corpus" / "jax"


def pair(name):
    return DATA / f"{name}.a.hlo", DATA / f"{name}.b.hlo"


def load(name):
    a, b = pair(name)
    return hlo_interp.parse_file(a), hlo_interp.parse_file(b)


def cli(*args, input=None):
    res = CliRunner().invoke(hlo_main, ["diff", *map(str, args)], input=input)
    return res.exit_code, res.output


def by_name(result, a_name):
    for c in result.computations:
        if (c.a is not None and c.a.name == a_name) or (c.a is None and c.b.name == a_name):
            return c
    raise KeyError(a_name)


# --------------------------------------------------------------------------------------------------
# Same program, different names

def test_renamed_pair_is_same_with_metadata_ignored():
    a, b = load("renamed")
    assert hlo_interp.to_text(a) != hlo_interp.to_text(b)
    d = diff_modules(a, b, ignore={"metadata"})
    assert d.same
    s = d.summary()
    assert s["instructions"] == {"matched": 29, "renamed": 16, "added": 0, "removed": 0, "changed": 0,
                                 "moved": 0}
    assert s["computations"] == {"matched": 5, "renamed": 1, "added": 0, "removed": 0, "changed": 0}
    entry = by_name(d, "main.2")
    assert entry.b.name == "main.3"
    fused = by_name(d, "fused_computation")
    assert ("sin.0", "sin.2") in fused.renamed and ("tanh.0", "tanh.2") in fused.renamed


def test_renamed_pair_metadata_counts_unless_ignored():
    a, b = load("renamed")
    d = diff_modules(a, b)
    assert not d.same
    assert d.summary()["instructions"]["changed"] == 19
    assert d.summary()["instructions"]["added"] == d.summary()["instructions"]["removed"] == 0
    sin = next(x for x in by_name(d, "fused_computation").changed if x.a.name == "sin.0")
    assert sin.b.name == "sin.2"
    [ch] = sin.changes
    assert (ch.what, ch.name) == ("attribute", "metadata")
    assert ch.before == '{op_name="jit(f)/sin" stack_frame_id=4}'
    assert ch.after == '{op_name="jit(nested)/jit(f)/sin" stack_frame_id=10}'
    assert [c.name for c in d.module_changes] == ["stack frames"]


def test_renamed_pair_cli_text():
    a, b = pair("renamed")
    code, out = cli("--ignore", "metadata", a, b)
    assert code == 0
    assert out.splitlines()[2:] == [
        "ignoring: metadata",
        "computations: 5 matched (1 renamed), 0 added, 0 removed, 0 changed",
        "instructions: 29 matched (16 renamed), 0 added, 0 removed, 0 changed",
        "",
        "same",
    ]
    code, out = cli(a, b)
    assert code == 1 and out.rstrip().endswith("different")
    assert "    ~ %sin.0 -> %sin.2 (sine)" in out


def test_swapped_names_same_program():
    """Two independent sines traced in the other order: XLA numbers them the other way round."""
    a, b = load("reordered")
    d = diff_modules(a, b)
    assert d.same
    [c] = d.computations
    assert sorted(c.renamed) == [("sin.2", "sin.3"), ("sin.3", "sin.2")]
    assert c.changed == [] and ("sin.2", "sin.3") in c.pairs
    # the sine of x is sin.2 in A and sin.3 in B: matched by structure, not by name
    assert "sin.2 = f32[8,128]{1,0} sine(x.1)" in pair("reordered")[0].read_text()
    assert "sin.3 = f32[8,128]{1,0} sine(x.1)" in pair("reordered")[1].read_text()


def _depth_order(comp):
    """A different valid order: by dependency depth, later-written first among equals."""
    depth = {}
    for ins in comp.instructions:
        depth[ins.name] = 1 + max((depth.get(o, 0) for o in ins.operands), default=0)
    order = sorted(range(len(comp.instructions)),
                   key=lambda k: (depth[comp.instructions[k].name], -k))
    comp.instructions = [comp.instructions[k] for k in order]


def test_reordered_instructions_and_computations():
    a = hlo_interp.parse_file(pair("constant")[0])
    b = hlo_interp.parse_file(pair("constant")[0])  # the same dump, then reordered
    for comp in b.computations:
        _depth_order(comp)
    b.computations.reverse()
    b = hlo_interp.parse(hlo_interp.to_text(b))
    assert hlo_interp.to_text(a) != hlo_interp.to_text(b)
    d = diff_modules(a, b)
    assert d.same
    assert d.summary()["instructions"] == {"matched": 29, "renamed": 0, "added": 0, "removed": 0,
                                          "changed": 0, "moved": 0}


def _renumber(text):
    """name.N -> name.N+1 everywhere outside metadata (a bijection on names)."""
    pat = re.compile(r"(%?)\b([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*)\.(\d+)\b(?=[\s,)(:=}]|$)")
    out = []
    for line in text.splitlines(True):
        head, sep, tail = line.partition(", metadata=")
        out.append(pat.sub(lambda m: f"{m.group(1)}{m.group(2)}.{int(m.group(3)) + 1}", head) + sep + tail)
    return "".join(out)


@pytest.mark.parametrize("name", ["grad_transformer_block.after", "while_loop_tuple_carry.after",
                                  "conv2d_nhwc_strided_pad.after", "associative_scan.before"])
def test_renumbered_corpus_dump_is_same(name):
    path = CORPUS / f"{name}.hlo"
    if not path.exists():
        pytest.fail(f"{path.name} not in the corpus")
    text = path.read_text()
    a, b = hlo_interp.parse(text), hlo_interp.parse(_renumber(text))
    numbered = sum(1 for c in a.computations for i in c.instructions if re.search(r"\.\d+$", i.name))
    assert numbered > 0
    d = diff_modules(a, b)
    assert d.same, d.to_text()
    assert d.summary()["instructions"]["renamed"] == numbered
    assert d.summary()["instructions"]["changed"] == 0


# --------------------------------------------------------------------------------------------------
# Real changes

def test_fusion_pass_off():
    a, b = load("fusion")
    d = diff_modules(a, b, ignore=["metadata"])
    assert not d.same
    assert d.summary()["computations"] == {"matched": 5, "renamed": 2, "added": 5, "removed": 0, "changed": 3}
    assert sorted(c.b.name for c in d.computations if c.status == "added") == [
        "wrapped_add_computation", "wrapped_broadcast_computation", "wrapped_multiply_computation",
        "wrapped_multiply_computation.1", "wrapped_sine_computation"]
    assert d.summary()["instructions"] == {"matched": 16, "renamed": 6, "added": 13, "removed": 6,
                                          "changed": 5, "moved": 7}
    entry = by_name(d, "main.2")
    assert sorted(i.name for i in entry.added) == [
        "wrapped_add", "wrapped_broadcast", "wrapped_multiply", "wrapped_multiply.1", "wrapped_sine"]
    assert entry.removed == []
    # the constants XLA had fused now live in the entry
    assert [(x.name, y.name, comp) for x, y, comp in entry.moved_in] == [
        ("constant.2", "constant.0", "fused_computation"), ("constant.3", "constant.1", "fused_computation.1")]
    changed = {(x.a.name, x.b.name): x.changes for x in entry.changed}
    assert set(changed) == {("multiply_reduce_fusion", "wrapped_reduce"), ("add_tanh_fusion", "wrapped_tanh")}
    ops, calls = changed[("add_tanh_fusion", "wrapped_tanh")]
    assert (ops.what, ops.before, ops.after) == ("operands", "(%wrapped_exponential, %x.1)", "(%wrapped_add)")
    assert (calls.what, calls.name, calls.before, calls.after) == (
        "calls", "calls", "%fused_computation", "%wrapped_tanh_computation")
    # the exponential fusion is identical in both: matched, unchanged
    assert "wrapped_exponential" not in {i.name for i in entry.added}
    assert by_name(d, "wrapped_exponential_computation").status == "same"
    # the old fusion bodies match the new single-op ones, whose other instructions are gone
    tanh = by_name(d, "fused_computation")
    assert tanh.b.name == "wrapped_tanh_computation"
    assert [i.name for i in tanh.removed] == ["param_1.2"]
    assert [(x.name, comp, y.name) for x, y, comp in tanh.moved_out] == [
        ("constant.0", "main.2", "constant.2"), ("sin.0", "wrapped_sine_computation", "sin.0"),
        ("mul.1", "wrapped_broadcast_computation", "mul.0"), ("mul.0", "wrapped_multiply_computation", "mul.1"),
        ("add.0", "wrapped_add_computation", "add.0")]
    assert [(x.a.name, x.b.name) for x in tanh.changed] == [("tanh.0", "tanh.0")]
    sine = by_name(d, "wrapped_sine_computation")
    assert sine.status == "added" and [i.name for i in sine.added] == ["param_0.1"]
    assert [(x.name, comp) for x, _, comp in sine.moved_in] == [("sin.0", "fused_computation")]
    text = d.to_text()
    assert "    < %mul.1 (broadcast) moved to %wrapped_broadcast_computation as %mul.0\n" in text
    assert "    > %sin.0 (sine) moved from %fused_computation\n" in text


def test_changed_constant_cli_text():
    a, b = pair("constant")
    code, out = cli("--ignore", "metadata", a, b)
    assert code == 1
    assert out.splitlines()[2:] == [
        "ignoring: metadata",
        "computations: 5 matched (0 renamed), 0 added, 0 removed, 3 changed",
        "instructions: 29 matched (0 renamed), 0 added, 0 removed, 4 changed",
        "",
        "~ computation %fused_computation: 0 added, 0 removed, 1 changed",
        "    ~ %constant.0 (constant)",
        "        literal: 2 -> 3",
        "",
        "~ computation %fused_computation.1: 0 added, 0 removed, 1 changed",
        "    ~ %constant.4 (constant)",
        "        literal: 2 -> 3",
        "",
        "~ computation %main.2: 0 added, 0 removed, 2 changed",
        "    ~ %multiply_reduce_fusion (fusion)",
        "        calls: %fused_computation.1 (body changed)",
        "    ~ %add_tanh_fusion (fusion)",
        "        calls: %fused_computation (body changed)",
        "",
        "different",
    ]


ADDED_OP_REPORT = """\
--- {a}  (module jit_f)
+++ {b}  (module jit_f_plus)
computations: 2 matched (0 renamed), 0 added, 0 removed, 1 changed
instructions: 16 matched (3 renamed), 3 added, 0 removed, 1 changed

~ computation %main.2: 3 added, 0 removed, 1 changed
    + %constant.3 = f32[] constant(1)
    + %add.3 = f32[8,128]{{1,0}} broadcast(%constant.3), dimensions={{}}
    + %add.5 = f32[8,128]{{1,0}} add(%tanh.1, %add.3)
    ~ %tuple.1 (tuple)
        operands: (%reduce_sum.7, %tanh.1) -> (%reduce_sum.7, %add.5)

different
"""


def test_added_op_report():
    a, b = pair("added_op")
    code, out = cli(a, b)
    assert code == 1
    assert out == ADDED_OP_REPORT.format(a=a, b=b)


def test_opcode_change():
    """`sin(x) * 2` became `sin(x) + 2`: the multiply is matched to the add, as a changed opcode."""
    a, b = pair("opcode")
    code, out = cli(a, b)
    assert code == 1
    assert out.splitlines()[2:] == [
        "computations: 2 matched (0 renamed), 0 added, 0 removed, 1 changed",
        "instructions: 16 matched (4 renamed), 0 added, 0 removed, 1 changed",
        "",
        "~ computation %main.2: 0 added, 0 removed, 1 changed",
        "    ~ %mul.4 -> %add.4 (add)",
        "        opcode: multiply -> add",
        "",
        "different",
    ]
    d = diff_modules(*load("opcode"))
    assert ("mul.5", "mul.1") in by_name(d, "main.2").pairs  # its user, renamed, unchanged


def test_unified_maps_names():
    a, b = pair("added_op")
    code, out = cli("-u", a, b)
    assert code == 1
    changed = [ln for ln in out.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    assert changed == [
        "-HloModule jit_f, entry_computation_layout={(f32[8,128]{1,0}, f32[8,128]{1,0})->(f32[128]{0}, f32[8,128]{1,0})}",
        "+HloModule jit_f_plus, entry_computation_layout={(f32[8,128]{1,0}, f32[8,128]{1,0})->(f32[128]{0}, f32[8,128]{1,0})}",
        "-  ROOT %tuple.1 = (f32[128]{0}, f32[8,128]{1,0}) tuple(%reduce_sum.7, %tanh.1)",
        # B's constant.3 is new, and A has a constant.3: it gets a suffix rather than a clash
        "+  %constant.3.new = f32[] constant(1)",
        "+  %add.3 = f32[8,128]{1,0} broadcast(%constant.3.new), dimensions={}",
        "+  %add.5 = f32[8,128]{1,0} add(%tanh.1, %add.3)",
        "+  ROOT %tuple.1 = (f32[128]{0}, f32[8,128]{1,0}) tuple(%reduce_sum.7, %add.5)",
    ]
    # renumbering alone gives no instruction lines
    a, b = pair("renamed")
    code, out = cli("-u", "--ignore", "metadata", a, b)
    assert code == 0
    changed = [ln for ln in out.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
    assert [ln.split(",")[0] for ln in changed] == ["-HloModule jit_f", "+HloModule jit_nested"]


def test_ignore_layouts(tmp_path):
    a, _ = pair("constant")
    text = a.read_text()
    assert "%x.1 = f32[8,128]{1,0} parameter(0)" in text
    changed = text.replace("%x.1 = f32[8,128]{1,0} parameter(0)", "%x.1 = f32[8,128]{0,1} parameter(0)")
    changed = changed.replace("entry_computation_layout={(f32[8,128]{1,0}",
                              "entry_computation_layout={(f32[8,128]{0,1}")
    b = tmp_path / "b.hlo"
    b.write_text(changed)
    d = diff_modules(hlo_interp.parse_file(a), hlo_interp.parse_file(b))
    assert not d.same
    [x] = by_name(d, "main.2").changed
    assert x.a.name == "x.1"
    assert [(c.what, c.before, c.after) for c in x.changes] == [
        ("shape", "f32[8,128]{1,0}", "f32[8,128]{0,1}")]
    [h] = d.module_changes
    assert h.name == "entry_computation_layout"
    assert cli("--ignore", "layouts", a, b)[0] == 0
    assert cli("--ignore", "metadata,layouts", "--ignore", "backend_config", a, b)[0] == 0
    assert cli(a, b)[0] == 1


def test_ignore_names_hides_renames():
    a, b = pair("renamed")
    code, out = cli("--ignore", "metadata,names", "--format", "json", a, b)
    assert code == 0
    data = json.loads(out)
    assert all("renamed" not in c for c in data["computations"])
    code, out = cli("--ignore", "names", "--ignore", "metadata", a, b)
    assert code == 0
    assert "(16 renamed)" not in out and "instructions: 29 matched, 0 added" in out


def test_backend_config_ignored(tmp_path):
    a, _ = pair("constant")
    text = a.read_text()
    b = tmp_path / "b.hlo"
    b.write_text(text.replace("calls=%fused_computation.1,",
                              'calls=%fused_computation.1, backend_config={"outer_dimension_partitions":["2"]},'))
    code, out = cli(a, b)
    assert code == 1
    assert 'backend_config: (none) -> {"outer_dimension_partitions":["2"]}' in out
    assert cli("--ignore", "backend_config", a, b)[0] == 0


# --------------------------------------------------------------------------------------------------
# Reports

def test_json_schema():
    a, b = pair("fusion")
    code, out = cli("--format", "json", "--ignore", "metadata", "-u", a, b)
    assert code == 1
    data = json.loads(out)
    assert set(data) == {"schema", "same", "a", "b", "ignore", "summary", "module_changes", "computations",
                         "unified"}
    assert data["schema"] == "hlo-diff/1" and data["same"] is False
    assert data["a"] == {"file": str(a), "module": "jit_f"}
    assert data["ignore"] == ["metadata"]
    assert data["summary"]["instructions"] == {"matched": 16, "renamed": 6, "added": 13, "removed": 6,
                                               "changed": 5, "moved": 7}
    statuses = {}
    for c in data["computations"]:
        assert set(c) == {"status", "a", "b", "matched_instructions", "added", "removed", "changed",
                          "attribute_changes", "renamed", "moved_in", "moved_out"}
        statuses[c["status"]] = statuses.get(c["status"], 0) + 1
        for i in c["added"] + c["removed"]:
            assert set(i) == {"name", "opcode", "shape", "text"} and i["text"].startswith(("%", "ROOT %"))
        for x in c["changed"]:
            assert set(x) == {"a", "b", "opcode", "changes"}
            for ch in x["changes"]:
                assert {"what", "name", "before", "after"} <= set(ch)
    assert statuses == {"same": 2, "changed": 3, "added": 5}
    moved_in = [m for c in data["computations"] for m in c["moved_in"]]
    assert len(moved_in) == 7 and moved_in[0] == {"name": "constant.2", "opcode": "constant",
                                                  "from_computation": "fused_computation", "from": "constant.0"}
    assert data["unified"].startswith(f"--- {a}\n+++ {b}\n@@")


class _Checker(HTMLParser):
    VOID = frozenset({"meta", "br", "hr", "img", "link", "input"})

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.tags = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for k, v in attrs:
            if k in ("src", "href") or (v and "http" in v):
                self.errors.append(f"external resource {k}={v}")
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unbalanced </{tag}> (open: {self.stack[-3:]})")
        else:
            self.stack.pop()


def test_html_is_well_formed_and_self_contained(tmp_path):
    a, b = pair("fusion")
    out = tmp_path / "d.html"
    code, text = cli("--format", "html", "-u", "-o", out, a, b)
    assert code == 1 and text == ""
    page = out.read_text()
    assert list(tmp_path.iterdir()) == [out]  # no temporary file left
    p = _Checker()
    p.feed(page)
    p.close()
    assert p.errors == [] and p.stack == []
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"<script[^>]*\bsrc=", page) and "<link" not in page  # nothing fetched
    assert p.tags.count("details") == 8  # 3 changed + 5 added computations
    assert "different" in page
    assert "wrapped_sine_computation" in page
    assert "-&gt;" in page and "->" not in page  # escaped
    assert "<h2>unified diff</h2>" in page
    code, same_page = cli("--format", "html", "--ignore", "metadata", *pair("renamed"))
    assert code == 0 and 'class="verdict same"' in same_page


# --------------------------------------------------------------------------------------------------
# Exit codes, input, API

def test_stdin_either_side():
    a, b = pair("added_op")
    code, out = cli(a, "-", input=b.read_text())
    assert code == 1 and "+++ <stdin>  (module jit_f_plus)" in out
    code, out = cli("-", a, input=a.read_text())
    assert code == 0 and out.rstrip().endswith("same")


def test_errors_exit_2(tmp_path):
    a, _ = pair("added_op")
    code, out = cli(a, tmp_path / "missing.hlo")
    assert code == 2 and f"{tmp_path / 'missing.hlo'}: error: no such file" in out
    bad = tmp_path / "bad.hlo"
    bad.write_text("HloModule m\n\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] add(p p)\n}\n")
    code, out = cli(a, bad)
    assert code == 2
    assert re.search(rf"{re.escape(str(bad))}:5:\d+: error: ", out)
    assert "Traceback" not in out and "^" in out
    code, out = cli("--ignore", "nonsense", a, a)
    assert code == 2 and "unknown item 'nonsense'" in out
    code, out = cli("-", "-", input="")
    assert code == 2 and "only once" in out
    code, out = cli(a)
    assert code == 2


def test_module_entry_point_and_color(tmp_path):
    a, b = pair("added_op")
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    env.pop("FORCE_COLOR", None)
    r = subprocess.run([sys.executable, "-m", "hlo_interp", "diff", "--color", "always", str(a), str(b)],
                       capture_output=True, text=True, env=env, check=False, cwd=ROOT)
    assert r.returncode == 1 and "\x1b[" in r.stdout and "different" in r.stdout
    env["NO_COLOR"] = "1"
    r = subprocess.run([sys.executable, "-m", "hlo_interp", "diff", str(a), str(a)],
                       capture_output=True, text=True, env=env, input="", check=False, cwd=ROOT)
    assert r.returncode == 0 and "\x1b[" not in r.stdout and r.stderr == ""


def test_api_identity_and_ignore_validation():
    a = hlo_interp.parse_file(pair("fusion")[1])
    d = diff_modules(a, a)
    assert d.same and d.summary()["instructions"]["renamed"] == 0
    assert d.summary()["instructions"]["matched"] == sum(len(c.instructions) for c in a.computations)
    assert normalize_ignore(["metadata,layouts", " names "]) == {"metadata", "layouts", "names"}
    assert normalize_ignore("backend_config") == {"backend_config"}
    with pytest.raises(ValueError):
        normalize_ignore(["metadata,colour"])
    assert json.loads(json.dumps(d.to_json()))["same"] is True


@pytest.mark.parametrize("name", ["while_loop_tuple_carry", "attention_forward", "argsort_stable",
                                  "grad_transformer_block"])
def test_before_vs_after_optimization_runs(name):
    """Before vs after optimization of real programs: no crash, every instruction accounted for."""
    before, after = CORPUS / f"{name}.before.hlo", CORPUS / f"{name}.after.hlo"
    if not before.exists():
        pytest.fail("not in the corpus")
    a, b = hlo_interp.parse_file(before), hlo_interp.parse_file(after)
    d = diff_modules(a, b, ignore=["metadata"])
    s = d.summary()["instructions"]
    n_a = sum(len(c.instructions) for c in a.computations)
    n_b = sum(len(c.instructions) for c in b.computations)
    assert s["matched"] + s["removed"] + s["moved"] == n_a and s["matched"] + s["added"] + s["moved"] == n_b
    assert d.to_text().rstrip().endswith(("same", "different"))


def test_verbose_lists_same_computations(tmp_path):
    a, b = pair("added_op")
    code, out = cli("-v", a, b)
    assert code == 1
    assert "= computation %region_0.1: 0 added, 0 removed, 0 changed" in out
    target = tmp_path / "report.txt"
    code, text = cli("-o", target, a, b)
    assert code == 1 and text == "" and target.read_text() == ADDED_OP_REPORT.format(a=a, b=b)


def _fanout_module(n, suffix="", reverse=False):
    body = [f"  a{i}{suffix} = f32[4] add(p{suffix}, p{suffix})" for i in range(n)]
    if reverse:
        body.reverse()
    ops = ", ".join(f"a{i}{suffix}" for i in range(n))
    return (f"HloModule m\n\nENTRY e {{\n  p{suffix} = f32[4] parameter(0)\n" + "\n".join(body) +
            f"\n  ROOT t{suffix} = ({', '.join(['f32[4]'] * n)}) tuple({ops})\n}}\n")


def test_wide_fanout_stays_linear():
    """2,000 identical users of one parameter, renamed and reordered: all matched by position."""
    a = hlo_interp.parse(_fanout_module(2000))
    b = hlo_interp.parse(_fanout_module(2000, suffix="_x", reverse=True))
    d = diff_modules(a, b)
    assert d.same
    assert d.summary()["instructions"] == {"matched": 2002, "renamed": 2002, "added": 0, "removed": 0,
                                          "changed": 0, "moved": 0}
    [c] = d.computations
    assert ("a1234", "a1234_x") in c.pairs
    # one more user in B: exactly one added, and the tuple changed
    c_text = _fanout_module(2000).replace("  ROOT t", "  extra = f32[4] add(p, p)\n  ROOT t")
    c_text = c_text.replace("tuple(a0,", "tuple(extra, a0,").replace(") tuple(", ", f32[4]) tuple(", 1)
    d = diff_modules(a, hlo_interp.parse(c_text))
    s = d.summary()["instructions"]
    assert (s["added"], s["removed"], s["changed"]) == (1, 0, 1)


def test_identical_users_without_context_pair_by_name():
    """Ambiguous identical subgraphs with no distinguishing users: same names are preferred."""
    n = 2000
    text_a = _fanout_module(n).split("  ROOT")[0] + "  ROOT r = f32[4] negate(p)\n}\n"
    text_b = _fanout_module(n, reverse=True).split("  ROOT")[0] + "  ROOT r = f32[4] negate(p)\n}\n"
    d = diff_modules(hlo_interp.parse(text_a), hlo_interp.parse(text_b))
    assert d.same and d.summary()["instructions"]["renamed"] == 0
    assert d.summary()["instructions"]["matched"] == n + 2


def test_backend_config_compared_as_json(tmp_path):
    """compiled.as_text() and the --xla_dump_to text of the same XLA:CPU compilation
    (tests/data/compare/backend_config, tools/make_compare_cases.py) print backend_config's JSON keys in
    different orders (17 fusions); the modules are the same."""
    d = ROOT / "tests" / "data" / "compare" / "backend_config"
    a, b = d / "compiled.hlo", d / "dump.cpu_after_optimizations.txt"
    ta, tb = a.read_text(), b.read_text()
    assert ta != tb and sorted(ta) == sorted(tb)  # the same characters, in another order
    code, out = cli(a, b)
    assert code == 0 and out.rstrip().endswith("same"), out
    assert "instructions: 481 matched (0 renamed), 0 added, 0 removed, 0 changed" in out
    # a real change of a value is still one
    changed = tb.replace('"outer_dimension_partitions":[],"fusion_config":{"kind":"__ynn_fusion"}',
                         '"outer_dimension_partitions":[2],"fusion_config":{"kind":"__ynn_fusion"}', 1)
    (tmp_path / "b.hlo").write_text(changed)
    code, out = cli(a, tmp_path / "b.hlo")
    assert code == 1 and "1 changed" in out and '"outer_dimension_partitions":[2]' in out
    # JSON that does not parse, and plain strings, compare as text
    ma = hlo_interp.parse(ta.replace('"outer_dimension_partitions":[]}', '"outer_dimension_partitions":[]} ', 1))
    assert diff_modules(ma, hlo_interp.parse(ta)).same
    from hlo_interp.diff import _same_json
    assert _same_json('{"a": 1, "b": [1, 2]}', '{"b":[1,2],"a":1}')
    assert not _same_json('{"a": 1}', '{"a": 1.5}') and not _same_json("x", "x")
    assert not _same_json('{"a": [1, 2]}', '{"a": [2, 1]}')  # lists keep their order
