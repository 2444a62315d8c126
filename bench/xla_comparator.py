"""XLA:CPU's optimized comparator of jnp.sort / jnp.argsort on f32 (tests/golden/sort/sort_float32, the
optimized text): the lines that turn p0 and p1 into the s32 keys k0 and k1 (NaN and -0 canonicalized,
then the bits ordered as integers).  Shared by the sort benchmarks; imports nothing, so a benchmark can
load it before choosing which checkout's hlo_interp to import."""

F32_KEY_LINES = """qnan = f32[] constant(nan)  zero = f32[] constant(0)  izero = s32[] constant(0)  imax = s32[] constant(2147483647)
  ne0 = pred[] compare(p0, p0), direction=NE  ne1 = pred[] compare(p1, p1), direction=NE
  eq0 = pred[] compare(p0, zero), direction=EQ  eq1 = pred[] compare(p1, zero), direction=EQ
  z0 = f32[] select(eq0, zero, p0)  z1 = f32[] select(eq1, zero, p1)
  c0 = f32[] select(ne0, qnan, z0)  c1 = f32[] select(ne1, qnan, z1)
  b0 = s32[] bitcast(c0)  b1 = s32[] bitcast(c1)
  x0 = s32[] xor(imax, b0)  x1 = s32[] xor(imax, b1)
  n0 = pred[] compare(b0, izero), direction=LT  n1 = pred[] compare(b1, izero), direction=LT
  k0 = s32[] select(n0, x0, b0)  k1 = s32[] select(n1, x1, b1)"""
