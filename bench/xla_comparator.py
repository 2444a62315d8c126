"""XLA:CPU's optimized comparator of jnp.sort / jnp.argsort on f32 (tests/golden/sort/sort_float32, the
optimized text): the lines that turn p0 and p1 into the s32 keys k0 and k1 (NaN and -0 canonicalized,
then the bits ordered as integers), read from tests/data/sort/xla_f32_key_lines.txt, which the tests read
too.  Shared by the sort benchmarks; imports nothing of hlo_interp, so a benchmark can load it before
choosing which checkout's hlo_interp to import."""
from pathlib import Path

F32_KEY_LINES = "\n".join(
    line for line in (Path(__file__).resolve().parent.parent / "tests" / "data" / "sort" / "xla_f32_key_lines.txt")
    .read_text().splitlines() if not line.startswith("#"))
