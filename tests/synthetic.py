"""Generated HLO modules shared by the tests and the screenshot tool (no pytest, no fixtures)."""
from __future__ import annotations


def train_step(layers, fused=False):
    """A generated training step of `layers` dense tanh layers (17 instructions a layer): a forward
    chain, the backward chain reading each layer's saved activation, an SGD update of every weight and
    bias, all returned in one tuple.  As deep and narrow as real ones, with a hundred parameters.
    fused: each tanh is a kLoop fusion."""
    ws = "".join(f"  w{k} = f32[16,16] parameter({2 * k + 2})\n  b{k} = f32[16] parameter({2 * k + 3})\n"
                 for k in range(layers))
    fwd, h = "", "x"
    for k in range(layers):
        fwd += (f"  d{k} = f32[8,16] dot({h}, w{k}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}\n"
                f"  bb{k} = f32[8,16] broadcast(b{k}), dimensions={{1}}\n  z{k} = f32[8,16] add(d{k}, bb{k})\n"
                + (f"  h{k} = f32[8,16] fusion(z{k}), kind=kLoop, calls=act\n" if fused else f"  h{k} = f32[8,16] tanh(z{k})\n"))
        h = f"h{k}"
    bwd, g, outs = f"  g{layers} = f32[8,16] multiply({h}, {h})\n", f"g{layers}", []
    for k in reversed(range(layers)):
        prev = "x" if k == 0 else f"h{k - 1}"
        bwd += (f"  hh{k} = f32[8,16] multiply(h{k}, h{k})\n  t{k} = f32[8,16] subtract(ones, hh{k})\n"
                f"  gz{k} = f32[8,16] multiply({g}, t{k})\n"
                f"  gw{k} = f32[16,16] dot({prev}, gz{k}), lhs_contracting_dims={{0}}, rhs_contracting_dims={{0}}\n"
                f"  gb{k} = f32[16] reduce(gz{k}, zero), dimensions={{0}}, to_apply=sum\n"
                f"  g{k} = f32[8,16] dot(gz{k}, w{k}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{1}}\n"
                f"  lw{k} = f32[16,16] broadcast(lr), dimensions={{}}\n  sw{k} = f32[16,16] multiply(lw{k}, gw{k})\n"
                f"  nw{k} = f32[16,16] subtract(w{k}, sw{k})\n  lb{k} = f32[16] broadcast(lr), dimensions={{}}\n"
                f"  sb{k} = f32[16] multiply(lb{k}, gb{k})\n  nb{k} = f32[16] subtract(b{k}, sb{k})\n")
        g = f"g{k}"
        outs += [f"nw{k}", f"nb{k}"]
    shapes = ", ".join("f32[16,16]" if o[1] == "w" else "f32[16]" for o in outs)
    return ("HloModule train_step\n\nsum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
            "  ROOT s = f32[] add(a, b)\n}\n\nact {\n  p = f32[8,16] parameter(0)\n  ROOT t = f32[8,16] tanh(p)\n}\n\n"
            "ENTRY main {\n  x = f32[8,16] parameter(0)\n  lr = f32[] parameter(1)\n"
            + ws + fwd + "  one = f32[] constant(1)\n  ones = f32[8,16] broadcast(one), dimensions={}\n"
            "  zero = f32[] constant(0)\n" + bwd + f"  ROOT out = ({shapes}) tuple({', '.join(outs)})\n}}\n")
