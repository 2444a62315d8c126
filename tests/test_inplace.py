"""In-place dynamic-update-slice of while-loop buffers (hlo_interp.in_place).

A scan/fori_loop that stacks its outputs writes one slice per iteration into a loop-carried buffer;
the evaluator writes it in place when nothing else can see the buffer.  Here: results of JAX's scans
and fori_loops (texts before and after XLA's optimizations, committed below: no JAX needed) are
bit-identical with the copying path (evaluator.IN_PLACE_LOOPS = False); the in-place path is taken
where it should be (ctx.in_place_loops, and the kernels actually called); and aliasing traps (the
caller's buffer, one array twice in the initial tuple, constants, views, a DUS result or a
get-tuple-element used twice, shared called computations, nested loops, re-runs, observers that keep
values) give the results of the copying path and never write an array that anyone else can see.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import hlo_interp
from hlo_interp import debug, evaluator, in_place
from hlo_interp.ops import movement

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "models"

# JAX 0.10.2 (jax.jit(f).lower(x).as_text(dialect="hlo") and .compile().as_text()), metadata removed:
#   scan:  c, (ys, ss) = lax.scan(lambda c, xi: (c := tanh(c * 0.5 + xi), (c * 2, c.sum())), zeros(4), x)
#          with x: f32[6,4]  (two stacked outputs: elements 2 and 3 of the loop tuple)
#   fori:  lax.fori_loop(0, 50, lambda i, buf: dynamic_update_slice(buf, full((1, 8), i) * n0, (i, 0)),
#                        zeros((50, 8)))  with n0: f32[]
JAX_SCAN_BEFORE = r"""
HloModule jit_scan2, entry_computation_layout={(f32[6,4]{1,0})->(f32[4]{0}, f32[6,4]{1,0}, f32[6]{0})}

dynamic_index_in_dim.1 {
  Arg_0.1 = f32[6,4]{1,0} parameter(0)
  Arg_1.1 = s32[] parameter(1)
  constant.6 = s32[] constant(0)
  dynamic_slice.1 = f32[1,4]{1,0} dynamic-slice(Arg_0.1, Arg_1.1, constant.6), dynamic_slice_sizes={1,4}
  ROOT squeeze.1 = f32[4]{0} reshape(dynamic_slice.1)
}

region_1.2 {
  reduce_sum.3 = f32[] parameter(0)
  reduce_sum.4 = f32[] parameter(1)
  ROOT reduce_sum.5 = f32[] add(reduce_sum.3, reduce_sum.4)
}

closed_call.3 {
  Arg_0.3 = f32[4]{0} parameter(0)
  constant.12 = f32[] constant(0.5)
  broadcast.6 = f32[4]{0} broadcast(constant.12), dimensions={}
  mul.2 = f32[4]{0} multiply(Arg_0.3, broadcast.6)
  Arg_1.3 = f32[4]{0} parameter(1)
  add.1 = f32[4]{0} add(mul.2, Arg_1.3)
  tanh.1 = f32[4]{0} tanh(add.1)
  constant.10 = f32[] constant(2)
  broadcast.5 = f32[4]{0} broadcast(constant.10), dimensions={}
  mul.3 = f32[4]{0} multiply(tanh.1, broadcast.5)
  constant.11 = f32[] constant(0)
  reduce_sum.7 = f32[] reduce(tanh.1, constant.11), dimensions={0}, to_apply=region_1.2
  ROOT tuple.1 = (f32[4]{0}, f32[4]{0}, f32[]) tuple(tanh.1, mul.3, reduce_sum.7)
}

dynamic_update_index_in_dim.4 {
  Arg_0.5 = f32[6,4]{1,0} parameter(0)
  Arg_1.5 = f32[4]{0} parameter(1)
  broadcast_in_dim.1 = f32[1,4]{1,0} reshape(Arg_1.5)
  Arg_2.1 = s32[] parameter(2)
  constant.14 = s32[] constant(0)
  ROOT dynamic_update_slice.1 = f32[6,4]{1,0} dynamic-update-slice(Arg_0.5, broadcast_in_dim.1, Arg_2.1, constant.14)
}

dynamic_update_index_in_dim_0.5 {
  Arg_0.7 = f32[6]{0} parameter(0)
  Arg_1.7 = f32[] parameter(1)
  broadcast_in_dim.3 = f32[1]{0} reshape(Arg_1.7)
  Arg_2.3 = s32[] parameter(2)
  ROOT dynamic_update_slice.3 = f32[6]{0} dynamic-update-slice(Arg_0.7, broadcast_in_dim.3, Arg_2.3)
}

region_0.6 {
  arg_tuple.1 = (s32[], f32[4]{0}, f32[6,4]{1,0}, f32[6]{0}, f32[6,4]{1,0}) parameter(0)
  get-tuple-element.5 = s32[] get-tuple-element(arg_tuple.1), index=0
  constant.15 = s32[] constant(1)
  add.3 = s32[] add(get-tuple-element.5, constant.15)
  get-tuple-element.6 = f32[4]{0} get-tuple-element(arg_tuple.1), index=1
  get-tuple-element.9 = f32[6,4]{1,0} get-tuple-element(arg_tuple.1), index=4
  jit_dynamic_index_in_dim_.1 = f32[4]{0} call(get-tuple-element.9, get-tuple-element.5), to_apply=dynamic_index_in_dim.1
  closed_call.4 = (f32[4]{0}, f32[4]{0}, f32[]) call(get-tuple-element.6, jit_dynamic_index_in_dim_.1), to_apply=closed_call.3
  closed_call.5 = f32[4]{0} get-tuple-element(closed_call.4), index=0
  get-tuple-element.7 = f32[6,4]{1,0} get-tuple-element(arg_tuple.1), index=2
  closed_call.6 = f32[4]{0} get-tuple-element(closed_call.4), index=1
  jit_dynamic_update_index_in_dim_.2 = f32[6,4]{1,0} call(get-tuple-element.7, closed_call.6, get-tuple-element.5), to_apply=dynamic_update_index_in_dim.4
  get-tuple-element.8 = f32[6]{0} get-tuple-element(arg_tuple.1), index=3
  closed_call.7 = f32[] get-tuple-element(closed_call.4), index=2
  jit_dynamic_update_index_in_dim_.3 = f32[6]{0} call(get-tuple-element.8, closed_call.7, get-tuple-element.5), to_apply=dynamic_update_index_in_dim_0.5
  ROOT tuple.3 = (s32[], f32[4]{0}, f32[6,4]{1,0}, f32[6]{0}, f32[6,4]{1,0}) tuple(add.3, closed_call.5, jit_dynamic_update_index_in_dim_.2, jit_dynamic_update_index_in_dim_.3, get-tuple-element.9)
}

region_2.7 {
  arg_tuple.3 = (s32[], f32[4]{0}, f32[6,4]{1,0}, f32[6]{0}, f32[6,4]{1,0}) parameter(0)
  get-tuple-element.16 = f32[4]{0} get-tuple-element(arg_tuple.3), index=1
  get-tuple-element.17 = f32[6,4]{1,0} get-tuple-element(arg_tuple.3), index=2
  get-tuple-element.18 = f32[6]{0} get-tuple-element(arg_tuple.3), index=3
  get-tuple-element.19 = f32[6,4]{1,0} get-tuple-element(arg_tuple.3), index=4
  get-tuple-element.15 = s32[] get-tuple-element(arg_tuple.3), index=0
  constant.17 = s32[] constant(6)
  ROOT lt.1 = pred[] compare(get-tuple-element.15, constant.17), direction=LT
}

ENTRY main.8 {
  constant.18 = s32[] constant(0)
  constant.19 = f32[] constant(0)
  broadcast.7 = f32[4]{0} broadcast(constant.19), dimensions={}
  constant.20 = f32[] constant(0)
  broadcast.8 = f32[6,4]{1,0} broadcast(constant.20), dimensions={}
  constant.21 = f32[] constant(0)
  broadcast.9 = f32[6]{0} broadcast(constant.21), dimensions={}
  x.1 = f32[6,4]{1,0} parameter(0)
  while.6 = (s32[], f32[4]{0}, f32[6,4]{1,0}, f32[6]{0}, f32[6,4]{1,0}) tuple(constant.18, broadcast.7, broadcast.8, broadcast.9, x.1)
  while.7 = (s32[], f32[4]{0}, f32[6,4]{1,0}, f32[6]{0}, f32[6,4]{1,0}) while(while.6), condition=region_2.7, body=region_0.6
  while.8 = s32[] get-tuple-element(while.7), index=0
  while.9 = f32[4]{0} get-tuple-element(while.7), index=1
  while.10 = f32[6,4]{1,0} get-tuple-element(while.7), index=2
  while.11 = f32[6]{0} get-tuple-element(while.7), index=3
  ROOT tuple.5 = (f32[4]{0}, f32[6,4]{1,0}, f32[6]{0}) tuple(while.9, while.10, while.11)
}
"""

JAX_SCAN_AFTER = r"""
HloModule jit_scan2, is_scheduled=true, entry_computation_layout={(f32[6,4]{1,0})->(f32[4]{0}, f32[6,4]{1,0}, f32[6]{0})}, allow_spmd_sharding_propagation_to_parameters={true}, allow_spmd_sharding_propagation_to_output={true,true,true}

%wrapped_broadcast_computation (param_0.5: f32[]) -> f32[4] {
  %param_0.5 = f32[] parameter(0)
  ROOT %broadcast.4 = f32[4]{0} broadcast(%param_0.5), dimensions={}
}

%wrapped_broadcast_computation.1 (param_0.6: f32[]) -> f32[6,4] {
  %param_0.6 = f32[] parameter(0)
  ROOT %broadcast.10 = f32[6,4]{1,0} broadcast(%param_0.6), dimensions={}
}

%wrapped_broadcast_computation.2 (param_0.7: f32[]) -> f32[6] {
  %param_0.7 = f32[] parameter(0)
  ROOT %broadcast.11 = f32[6]{0} broadcast(%param_0.7), dimensions={}
}

%region_1.2 (reduce_sum.3: f32[], reduce_sum.4: f32[]) -> f32[] {
  %reduce_sum.3 = f32[] parameter(0)
  %reduce_sum.4 = f32[] parameter(1)
  ROOT %reduce_sum.5 = f32[] add(%reduce_sum.3, %reduce_sum.4)
}

%fused_computation (param_0: f32[6], param_1.1: s32[], param_2.2: f32[4]) -> f32[6] {
  %param_0 = f32[6]{0} parameter(0)
  %param_2.2 = f32[4]{0} parameter(2)
  %constant.5 = f32[] constant(0)
  %reduce_sum.1 = f32[] reduce(%param_2.2, %constant.5), dimensions={0}, to_apply=%region_1.2
  %bitcast.3 = f32[1]{0} bitcast(%reduce_sum.1)
  %param_1.1 = s32[] parameter(1)
  ROOT %dynamic_update_slice.4 = f32[6]{0} dynamic-update-slice(%param_0, %bitcast.3, %param_1.1)
}

%fused_computation.1 (param_0.1: f32[6,4], param_1.3: s32[], param_2.5: f32[4]) -> f32[6,4] {
  %param_0.1 = f32[6,4]{1,0} parameter(0)
  %param_2.5 = f32[4]{0} parameter(2)
  %constant.7 = f32[] constant(2)
  %broadcast.2 = f32[4]{0} broadcast(%constant.7), dimensions={}
  %mul.4 = f32[4]{0} multiply(%param_2.5, %broadcast.2)
  %bitcast.4 = f32[1,4]{1,0} bitcast(%mul.4)
  %param_1.3 = s32[] parameter(1)
  %constant.8 = s32[] constant(0)
  ROOT %dynamic_update_slice.5 = f32[6,4]{1,0} dynamic-update-slice(%param_0.1, %bitcast.4, %param_1.3, %constant.8)
}

%fused_computation.2 (param_0.4: f32[6,4], param_1.7: s32[], param_2.7: f32[4]) -> f32[4] {
  %param_2.7 = f32[4]{0} parameter(2)
  %constant.13 = f32[] constant(0.5)
  %broadcast.3 = f32[4]{0} broadcast(%constant.13), dimensions={}
  %mul.5 = f32[4]{0} multiply(%param_2.7, %broadcast.3)
  %param_0.4 = f32[6,4]{1,0} parameter(0)
  %param_1.7 = s32[] parameter(1)
  %constant.9 = s32[] constant(0)
  %dynamic_slice.2 = f32[1,4]{1,0} dynamic-slice(%param_0.4, %param_1.7, %constant.9), dynamic_slice_sizes={1,4}
  %bitcast.5 = f32[4]{0} bitcast(%dynamic_slice.2)
  %add.2 = f32[4]{0} add(%mul.5, %bitcast.5)
  ROOT %tanh.2 = f32[4]{0} tanh(%add.2)
}

%wrapped_add_computation (param_0.8: s32[], param_1.8: s32[]) -> s32[] {
  %param_0.8 = s32[] parameter(0)
  %param_1.8 = s32[] parameter(1)
  ROOT %add.4 = s32[] add(%param_0.8, %param_1.8)
}

%region_0.6 (arg_tuple.1: (s32[], f32[4], f32[6,4], f32[6], f32[6,4])) -> (s32[], f32[4], f32[6,4], f32[6], f32[6,4]) {
  %arg_tuple.1 = (s32[], f32[4]{0}, f32[6,4]{1,0}, f32[6]{0}, f32[6,4]{1,0}) parameter(0)
  %constant.15 = s32[] constant(1)
  %get-tuple-element.24 = f32[6,4]{1,0} get-tuple-element(%arg_tuple.1), index=4
  %get-tuple-element.13 = f32[6]{0} get-tuple-element(%arg_tuple.1), index=3
  %get-tuple-element.12 = f32[6,4]{1,0} get-tuple-element(%arg_tuple.1), index=2
  %get-tuple-element.11 = f32[4]{0} get-tuple-element(%arg_tuple.1), index=1
  %get-tuple-element.10 = s32[] get-tuple-element(%arg_tuple.1), index=0
  %copy.6 = s32[] copy(%get-tuple-element.10)
  %wrapped_add = s32[] fusion(%copy.6, %constant.15), kind=kLoop, calls=%wrapped_add_computation
  %add_tanh_fusion = f32[4]{0} fusion(%get-tuple-element.24, %copy.6, %get-tuple-element.11), kind=kLoop, calls=%fused_computation.2
  %bitcast_dynamic-update-slice_fusion.1 = f32[6,4]{1,0} fusion(%get-tuple-element.12, %copy.6, %add_tanh_fusion), kind=kLoop, calls=%fused_computation.1
  %bitcast_dynamic-update-slice_fusion = f32[6]{0} fusion(%get-tuple-element.13, %copy.6, %add_tanh_fusion), kind=kLoop, calls=%fused_computation
  ROOT %tuple.6 = (s32[], f32[4]{0}, f32[6,4]{1,0}, f32[6]{0}, f32[6,4]{1,0}) tuple(%wrapped_add, %add_tanh_fusion, %bitcast_dynamic-update-slice_fusion.1, %bitcast_dynamic-update-slice_fusion, %get-tuple-element.24)
}

%wrapped_compare_computation (param_0.9: s32[], param_1.9: s32[]) -> pred[] {
  %param_0.9 = s32[] parameter(0)
  %param_1.9 = s32[] parameter(1)
  ROOT %lt.0 = pred[] compare(%param_0.9, %param_1.9), direction=LT
}

%region_2.7 (arg_tuple.3: (s32[], f32[4], f32[6,4], f32[6], f32[6,4])) -> pred[] {
  %arg_tuple.3 = (s32[], f32[4]{0}, f32[6,4]{1,0}, f32[6]{0}, f32[6,4]{1,0}) parameter(0)
  %constant.17 = s32[] constant(6)
  %get-tuple-element.15 = s32[] get-tuple-element(%arg_tuple.3), index=0
  ROOT %wrapped_compare = pred[] fusion(%get-tuple-element.15, %constant.17), kind=kLoop, calls=%wrapped_compare_computation
}

%while.7_computation (tuple.7: (s32[], f32[4], f32[6,4], f32[6], f32[6,4])) -> (s32[], f32[4], f32[6,4], f32[6], f32[6,4]) {
  %tuple.7 = (s32[], f32[4]{0}, f32[6,4]{1,0}, f32[6]{0}, f32[6,4]{1,0}) parameter(0)
  ROOT %while.0 = (s32[], f32[4]{0}, f32[6,4]{1,0}, f32[6]{0}, f32[6,4]{1,0}) while(%tuple.7), condition=%region_2.7, body=%region_0.6
}

ENTRY %main.8 (x.1: f32[6,4]) -> (f32[4], f32[6,4], f32[6]) {
  %x.1 = f32[6,4]{1,0} parameter(0)
  %constant.18 = s32[] constant(0)
  %constant.19 = f32[] constant(0)
  %copy.14 = s32[] copy(%constant.18)
  %wrapped_broadcast = f32[4]{0} fusion(%constant.19), kind=kLoop, calls=%wrapped_broadcast_computation
  %wrapped_broadcast.1 = f32[6,4]{1,0} fusion(%constant.19), kind=kLoop, calls=%wrapped_broadcast_computation.1
  %wrapped_broadcast.2 = f32[6]{0} fusion(%constant.19), kind=kLoop, calls=%wrapped_broadcast_computation.2
  %tuple.2 = (s32[], f32[4]{0}, f32[6,4]{1,0}, f32[6]{0}, f32[6,4]{1,0}) tuple(%copy.14, %wrapped_broadcast, %wrapped_broadcast.1, %wrapped_broadcast.2, %x.1)
  %call = (s32[], f32[4]{0}, f32[6,4]{1,0}, f32[6]{0}, f32[6,4]{1,0}) call(%tuple.2), to_apply=%while.7_computation
  %while.11 = f32[6]{0} get-tuple-element(%call), index=3
  %while.9 = f32[4]{0} get-tuple-element(%call), index=1
  %while.10 = f32[6,4]{1,0} get-tuple-element(%call), index=2
  ROOT %tuple.5 = (f32[4]{0}, f32[6,4]{1,0}, f32[6]{0}) tuple(%while.9, %while.10, %while.11)
}
"""

JAX_FORI_BEFORE = r"""
HloModule jit_fori, entry_computation_layout={(f32[])->f32[50,8]{1,0}}

closed_call.1 {
  Arg_1.1 = s32[] parameter(1)
  constant.8 = s32[] constant(1)
  add.2 = s32[] add(Arg_1.1, constant.8)
  Arg_2.1 = f32[50,8]{1,0} parameter(2)
  convert_element_type.1 = f32[] convert(Arg_1.1)
  broadcast_in_dim.2 = f32[1,8]{1,0} broadcast(convert_element_type.1), dimensions={}
  Arg_0.1 = f32[] parameter(0)
  mul.2 = f32[1,8]{1,0} broadcast(Arg_0.1), dimensions={}
  mul.3 = f32[1,8]{1,0} multiply(broadcast_in_dim.2, mul.2)
  constant.7 = s32[] constant(0)
  lt.1 = pred[] compare(Arg_1.1, constant.7), direction=LT
  constant.6 = s32[] constant(50)
  add.3 = s32[] add(Arg_1.1, constant.6)
  select_n.1 = s32[] select(lt.1, add.3, Arg_1.1)
  dynamic_update_slice.1 = f32[50,8]{1,0} dynamic-update-slice(Arg_2.1, mul.3, select_n.1, constant.7)
  ROOT tuple.1 = (s32[], f32[50,8]{1,0}) tuple(add.2, dynamic_update_slice.1)
}

region_0.2 {
  arg_tuple.1 = (s32[], s32[], f32[50,8]{1,0}, f32[]) parameter(0)
  get-tuple-element.4 = s32[] get-tuple-element(arg_tuple.1), index=0
  constant.9 = s32[] constant(1)
  add.5 = s32[] add(get-tuple-element.4, constant.9)
  get-tuple-element.7 = f32[] get-tuple-element(arg_tuple.1), index=3
  get-tuple-element.5 = s32[] get-tuple-element(arg_tuple.1), index=1
  get-tuple-element.6 = f32[50,8]{1,0} get-tuple-element(arg_tuple.1), index=2
  closed_call.3 = (s32[], f32[50,8]{1,0}) call(get-tuple-element.7, get-tuple-element.5, get-tuple-element.6), to_apply=closed_call.1
  closed_call.4 = s32[] get-tuple-element(closed_call.3), index=0
  closed_call.5 = f32[50,8]{1,0} get-tuple-element(closed_call.3), index=1
  ROOT tuple.3 = (s32[], s32[], f32[50,8]{1,0}, f32[]) tuple(add.5, closed_call.4, closed_call.5, get-tuple-element.7)
}

region_1.3 {
  arg_tuple.3 = (s32[], s32[], f32[50,8]{1,0}, f32[]) parameter(0)
  get-tuple-element.13 = s32[] get-tuple-element(arg_tuple.3), index=1
  get-tuple-element.14 = f32[50,8]{1,0} get-tuple-element(arg_tuple.3), index=2
  get-tuple-element.15 = f32[] get-tuple-element(arg_tuple.3), index=3
  get-tuple-element.12 = s32[] get-tuple-element(arg_tuple.3), index=0
  constant.11 = s32[] constant(50)
  ROOT lt.3 = pred[] compare(get-tuple-element.12, constant.11), direction=LT
}

ENTRY main.4 {
  constant.12 = s32[] constant(0)
  constant.13 = f32[] constant(0)
  broadcast_in_dim.3 = f32[50,8]{1,0} broadcast(constant.13), dimensions={}
  n0.1 = f32[] parameter(0)
  while.5 = (s32[], s32[], f32[50,8]{1,0}, f32[]) tuple(constant.12, constant.12, broadcast_in_dim.3, n0.1)
  while.6 = (s32[], s32[], f32[50,8]{1,0}, f32[]) while(while.5), condition=region_1.3, body=region_0.2
  while.7 = s32[] get-tuple-element(while.6), index=0
  while.8 = s32[] get-tuple-element(while.6), index=1
  ROOT while.9 = f32[50,8]{1,0} get-tuple-element(while.6), index=2
}
"""

JAX_FORI_AFTER = r"""
HloModule jit_fori, is_scheduled=true, entry_computation_layout={(f32[])->f32[50,8]{1,0}}, allow_spmd_sharding_propagation_to_parameters={true}, allow_spmd_sharding_propagation_to_output={true}

%wrapped_broadcast_computation (param_0.1: f32[]) -> f32[50,8] {
  %param_0.1 = f32[] parameter(0)
  ROOT %broadcast_in_dim.1 = f32[50,8]{1,0} broadcast(%param_0.1), dimensions={}
}

%fused_computation (param_0: f32[50,8], param_1.1: s32[], param_2.5: f32[]) -> f32[50,8] {
  %param_0 = f32[50,8]{1,0} parameter(0)
  %param_1.1 = s32[] parameter(1)
  %convert_element_type.5 = f32[] convert(%param_1.1)
  %param_2.5 = f32[] parameter(2)
  %mul.8 = f32[] multiply(%convert_element_type.5, %param_2.5)
  %broadcast.6 = f32[1,8]{1,0} broadcast(%mul.8), dimensions={}
  %constant.24 = s32[] constant(0)
  %lt.8 = pred[] compare(%param_1.1, %constant.24), direction=LT
  %constant.23 = s32[] constant(50)
  %add.17 = s32[] add(%param_1.1, %constant.23)
  %select_n.5 = s32[] select(%lt.8, %add.17, %param_1.1)
  ROOT %dynamic_update_slice.5 = f32[50,8]{1,0} dynamic-update-slice(%param_0, %broadcast.6, %select_n.5, %constant.24)
}

%wrapped_add_computation (param_0.2: s32[], param_1.2: s32[]) -> s32[] {
  %param_0.2 = s32[] parameter(0)
  %param_1.2 = s32[] parameter(1)
  ROOT %add.18 = s32[] add(%param_0.2, %param_1.2)
}

%region_0.2.clone.clone.clone (arg_tuple.6: (s32[], f32[50,8], f32[])) -> (s32[], f32[50,8], f32[]) {
  %arg_tuple.6 = (s32[], f32[50,8]{1,0}, f32[]) parameter(0)
  %constant.20 = s32[] constant(1)
  %get-tuple-element.58 = f32[] get-tuple-element(%arg_tuple.6), index=2
  %get-tuple-element.54 = f32[50,8]{1,0} get-tuple-element(%arg_tuple.6), index=1
  %get-tuple-element.53 = s32[] get-tuple-element(%arg_tuple.6), index=0
  %copy.3 = s32[] copy(%get-tuple-element.53)
  %select_dynamic-update-slice_fusion = f32[50,8]{1,0} fusion(%get-tuple-element.54, %copy.3, %get-tuple-element.58), kind=kLoop, calls=%fused_computation
  %wrapped_add = s32[] fusion(%copy.3, %constant.20), kind=kLoop, calls=%wrapped_add_computation
  ROOT %tuple.14 = (s32[], f32[50,8]{1,0}, f32[]) tuple(%wrapped_add, %select_dynamic-update-slice_fusion, %get-tuple-element.58)
}

%wrapped_compare_computation (param_0.3: s32[], param_1.3: s32[]) -> pred[] {
  %param_0.3 = s32[] parameter(0)
  %param_1.3 = s32[] parameter(1)
  ROOT %lt.9 = pred[] compare(%param_0.3, %param_1.3), direction=LT
}

%region_1.3.clone.clone (arg_tuple.5: (s32[], f32[50,8], f32[])) -> pred[] {
  %arg_tuple.5 = (s32[], f32[50,8]{1,0}, f32[]) parameter(0)
  %constant.19 = s32[] constant(50)
  %get-tuple-element.41 = s32[] get-tuple-element(%arg_tuple.5), index=0
  ROOT %wrapped_compare = pred[] fusion(%get-tuple-element.41, %constant.19), kind=kLoop, calls=%wrapped_compare_computation
}

%while.1_computation (tuple.15: (s32[], f32[50,8], f32[])) -> (s32[], f32[50,8], f32[]) {
  %tuple.15 = (s32[], f32[50,8]{1,0}, f32[]) parameter(0)
  ROOT %while.2 = (s32[], f32[50,8]{1,0}, f32[]) while(%tuple.15), condition=%region_1.3.clone.clone, body=%region_0.2.clone.clone.clone
}

ENTRY %main.4 (n0.1: f32[]) -> f32[50,8] {
  %n0.1 = f32[] parameter(0)
  %constant.12 = s32[] constant(0)
  %constant.13 = f32[] constant(0)
  %copy.7 = s32[] copy(%constant.12)
  %wrapped_broadcast = f32[50,8]{1,0} fusion(%constant.13), kind=kLoop, calls=%wrapped_broadcast_computation
  %tuple.12 = (s32[], f32[50,8]{1,0}, f32[]) tuple(%copy.7, %wrapped_broadcast, %n0.1)
  %call = (s32[], f32[50,8]{1,0}, f32[]) call(%tuple.12), to_apply=%while.1_computation
  ROOT %while.9 = f32[50,8]{1,0} get-tuple-element(%call), index=1
}
"""

# --------------------------------------------------------------------------------------------------
# Helpers


def _module(text):
    return hlo_interp.parse(text, "inplace.hlo")


def _build(text_or_module, monkeypatch=None, in_place=True, **kw):
    m = _module(text_or_module) if isinstance(text_or_module, str) else text_or_module
    if monkeypatch is not None:
        monkeypatch.setattr(evaluator, "IN_PLACE_LOOPS", in_place)
    return evaluator.compile(m, **kw)


def _same(a_outs, b_outs):
    """Bit for bit: same dtypes, shapes and bytes (NaN payloads included)."""
    assert len(a_outs) == len(b_outs)
    for a, b in zip(a_outs, b_outs):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def _both(text, args, monkeypatch, expect_loops=None):
    """Run with in-place updates and with the copying path; results must be bit-identical.  Returns
    (outputs, in-place executable)."""
    copying = _build(text, monkeypatch, in_place=False)
    assert copying.ctx.in_place_loops == {}
    ref = copying(*[np.array(a, copy=True) for a in args])
    exe = _build(text, monkeypatch, in_place=True)
    if expect_loops is not None:
        assert exe.ctx.in_place_loops == expect_loops
    outs = exe(*args)
    _same(outs, ref)
    return outs, exe


class _Count:
    """Counts calls of movement.dynamic_update_slice (copying) and _in_place (writing)."""

    def __init__(self, monkeypatch):
        self.copying = self.writing = 0
        copy_fn, write_fn = movement.dynamic_update_slice, movement.dynamic_update_slice_in_place

        def copying(*a):
            self.copying += 1
            return copy_fn(*a)

        def writing(*a):
            self.writing += 1
            return write_fn(*a)
        monkeypatch.setattr(movement, "dynamic_update_slice", copying)
        monkeypatch.setattr(movement, "dynamic_update_slice_in_place", writing)


# The basic hand-written loop: rows i of buf become row + i, for i < 5.
LOOP = """HloModule loop

body {
  p = (s32[], f32[5,4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  buf = f32[5,4] get-tuple-element(p), index=1
  row = f32[4] get-tuple-element(p), index=2
  fi = f32[] convert(i)
  fb = f32[4] broadcast(fi), dimensions={}
  r = f32[4] add(row, fb)
  u = f32[1,4] reshape(r)
  z = s32[] constant(0)
  d = f32[5,4] dynamic-update-slice(buf, u, i, z)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[5,4], f32[4]) tuple(i1, d, row)
}

cond {
  p = (s32[], f32[5,4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  buf = f32[5,4] parameter(0)
  row = f32[4] parameter(1)
  z = s32[] constant(0)
  t = (s32[], f32[5,4], f32[4]) tuple(z, buf, row)
  w = (s32[], f32[5,4], f32[4]) while(t), condition=cond, body=body
  ROOT r = f32[5,4] get-tuple-element(w), index=1
}
"""


def _loop_expected(buf, row, n=5):
    out = np.array(buf, copy=True)
    for i in range(n):
        out[i] = row + np.float32(i)
    return out


def _inputs():
    rs = np.random.RandomState(0)
    return rs.randn(5, 4).astype(np.float32), rs.randn(4).astype(np.float32)


# --------------------------------------------------------------------------------------------------
# JAX's scans and fori_loops, before and after XLA's optimizations


@pytest.mark.parametrize("name,loops", [
    ("scan_before", {"while.7": (2, 3)}), ("scan_after", {"while.0": (2, 3)}),
    ("fori_before", {"while.6": (2,)}), ("fori_after", {"while.2": (1,)})])
def test_jax_loops_bit_identical_and_in_place(name, loops, monkeypatch):
    text = globals()["JAX_" + name.upper()]
    if name.startswith("scan"):
        x = (np.arange(24, dtype=np.float32).reshape(6, 4) - 11.5) / 7
        outs, exe = _both(text, [x], monkeypatch, loops)
        assert outs[1].shape == (6, 4) and outs[2].shape == (6,)
        np.testing.assert_allclose(outs[1][-1], 2 * outs[0], rtol=0)  # ys[-1] = 2 * final carry
    else:
        outs, exe = _both(text, [np.float32(1.5)], monkeypatch, loops)
        expected = np.arange(50, dtype=np.float32)[:, None].repeat(8, 1) * np.float32(1.5)
        _same(outs, [expected])
    # the body's in-place variant exists beside the ordinary plan, which is unchanged
    variants = [k for k in exe.ctx.plan_sources if "[in place" in k]
    assert variants and all(k.split(" [")[0] in exe.ctx.plan_sources for k in variants)


def test_in_place_kernel_is_what_runs(monkeypatch):
    m = _module(JAX_FORI_AFTER)
    count = _Count(monkeypatch)
    exe = _build(m, monkeypatch, in_place=True)
    exe(np.float32(2))
    assert (count.writing, count.copying) == (50, 0)
    count.writing = count.copying = 0
    exe = _build(m, monkeypatch, in_place=False)
    exe(np.float32(2))
    assert (count.writing, count.copying) == (0, 50)
    # and the plan says so: the fused computation's in-place variant has the marked kernel
    exe = _build(m, monkeypatch, in_place=True)
    steps = exe.ctx.plan_steps["fused_computation [in place: parameters 0]"]
    assert [fn.in_place for fn, _, _, ins, _ in steps if ins.opcode == "dynamic-update-slice"] == [True]
    steps = exe.ctx.plan_steps["fused_computation"]
    assert [fn.in_place for fn, _, _, ins, _ in steps if ins.opcode == "dynamic-update-slice"] == [False]


def test_environment_variable_turns_it_off(monkeypatch):
    import subprocess
    import sys
    code = ("import hlo_interp.evaluator as e; print(e.IN_PLACE_LOOPS)")
    for value, expected in (("0", "False"), ("1", "True")):
        env = dict(__import__("os").environ, HLO_INTERP_IN_PLACE=value)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                             cwd=str(ROOT), check=True).stdout.strip()
        assert out == expected


@pytest.mark.parametrize("form", ["before", "after"])
def test_gru_scan_golden(form, monkeypatch):
    case = GOLDEN / "gru_scan_f32"
    text = (case / f"{form}.hlo").read_text()
    meta = json.loads((case / "case.json").read_text())
    data = np.load(case / "inputs.npz")
    args = [data[i["key"]] for i in meta["inputs"]]
    kept = [np.array(a, copy=True) for a in args]
    outs, exe = _both(text, args, monkeypatch)
    assert exe.ctx.in_place_loops, "the GRU's scans stack their outputs: some loop must qualify"
    for a, b in zip(args, kept):
        _same([a], [b])
    expected = np.load(case / "expected.npz")
    for o, spec in zip(outs, meta["outputs"]):
        np.testing.assert_allclose(o, expected[spec["key"]], **meta["compare"])


# --------------------------------------------------------------------------------------------------
# Aliasing traps


def test_callers_buffer_is_never_written_and_results_survive_reruns(monkeypatch):
    buf, row = _inputs()
    kept = buf.copy()
    outs, exe = _both(LOOP, [buf, row], monkeypatch, {"w": (1,)})
    _same([buf], [kept])
    _same(outs, [_loop_expected(kept, row)])
    # a second run copies the initial value afresh and leaves the first run's result alone
    first = outs[0].copy()
    again = exe(buf, row + 1)
    _same(outs, [first])
    _same(again, [_loop_expected(kept, row + 1)])
    _same([buf], [kept])


def test_read_only_and_view_inputs(monkeypatch):
    buf, row = _inputs()
    ro = buf.copy()
    ro.flags.writeable = False
    outs, _ = _both(LOOP, [ro, row], monkeypatch, {"w": (1,)})
    _same(outs, [_loop_expected(buf, row)])
    # a view of a bigger array of the caller: the caller's array is untouched
    big = np.zeros((10, 4), np.float32)
    big[::2] = buf
    kept = big.copy()
    outs, _ = _both(LOOP, [big[::2], row], monkeypatch, {"w": (1,)})
    _same([big], [kept])
    _same(outs, [_loop_expected(buf, row)])


CONSTANT_INIT = LOOP.replace("""  buf = f32[5,4] parameter(0)
  row = f32[4] parameter(1)""", """  buf = f32[5,4] constant({{1,1,1,1},{2,2,2,2},{3,3,3,3},{4,4,4,4},{5,5,5,5}})
  row = f32[4] parameter(0)""").replace("""  n = s32[] constant(5)""", """  n = s32[] constant(3)""")


def test_constant_initial_buffer(monkeypatch):
    row = np.arange(4, dtype=np.float32)
    base = np.repeat(np.arange(1, 6, dtype=np.float32)[:, None], 4, 1)
    outs, exe = _both(CONSTANT_INIT, [row], monkeypatch, {"w": (1,)})
    _same(outs, [_loop_expected(base, row, 3)])
    _same(exe(row * 2), [_loop_expected(base, row * 2, 3)])  # the constant was not written
    _same(exe(row), outs)


VIEW_INIT = LOOP.replace("""  buf = f32[5,4] parameter(0)
  row = f32[4] parameter(1)""", """  bt = f32[4,5] parameter(0)
  buf = f32[5,4] transpose(bt), dimensions={1,0}
  row = f32[4] parameter(1)""")


def test_initial_buffer_a_view_of_a_parameter(monkeypatch):
    buf, row = _inputs()
    bt = np.ascontiguousarray(buf.T)
    kept = bt.copy()
    outs, _ = _both(VIEW_INIT, [bt, row], monkeypatch, {"w": (1,)})
    _same([bt], [kept])
    _same(outs, [_loop_expected(buf, row)])


SAME_ARRAY_TWICE = """HloModule twice

body {
  p = (s32[], f32[5,4], f32[5,4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = f32[5,4] get-tuple-element(p), index=1
  b = f32[5,4] get-tuple-element(p), index=2
  row = f32[4] get-tuple-element(p), index=3
  fi = f32[] convert(i)
  fb = f32[4] broadcast(fi), dimensions={}
  r = f32[4] add(row, fb)
  u = f32[1,4] reshape(r)
  z = s32[] constant(0)
  da = f32[5,4] dynamic-update-slice(a, u, i, z)
  four = s32[] constant(4)
  j = s32[] subtract(four, i)
  nu = f32[1,4] negate(u)
  db = f32[5,4] dynamic-update-slice(b, nu, j, z)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[5,4], f32[5,4], f32[4]) tuple(i1, da, db, row)
}

cond {
  p = (s32[], f32[5,4], f32[5,4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  buf = f32[5,4] parameter(0)
  row = f32[4] parameter(1)
  z = s32[] constant(0)
  t = (s32[], f32[5,4], f32[5,4], f32[5,4], f32[4]) tuple(z, buf, buf, buf, row)
  t0 = s32[] get-tuple-element(t), index=0
  t1 = f32[5,4] get-tuple-element(t), index=1
  t2 = f32[5,4] get-tuple-element(t), index=2
  t4 = f32[4] get-tuple-element(t), index=4
  ti = (s32[], f32[5,4], f32[5,4], f32[4]) tuple(t0, t1, t2, t4)
  w = (s32[], f32[5,4], f32[5,4], f32[4]) while(ti), condition=cond, body=body
  wa = f32[5,4] get-tuple-element(w), index=1
  wb = f32[5,4] get-tuple-element(w), index=2
  other = f32[5,4] get-tuple-element(t), index=3
  ROOT r = (f32[5,4], f32[5,4], f32[5,4]) tuple(wa, wb, other)
}
"""


def test_one_array_in_two_elements_of_the_initial_tuple(monkeypatch):
    buf, row = _inputs()
    kept = buf.copy()
    outs, _ = _both(SAME_ARRAY_TWICE, [buf, row], monkeypatch, {"w": (1, 2)})
    ea, eb = kept.copy(), kept.copy()
    for i in range(3):
        ea[i] = row + np.float32(i)
        eb[4 - i] = -(row + np.float32(i))
    _same(outs, [ea, eb, kept])
    _same([buf], [kept])
    assert not np.shares_memory(outs[0], outs[1])


# The DUS result is also carried as element 3 (and reduced): not in place.
DUS_USED_TWICE = """HloModule dus_twice

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

body {
  p = (s32[], f32[5,4], f32[4], f32[5,4], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  buf = f32[5,4] get-tuple-element(p), index=1
  row = f32[4] get-tuple-element(p), index=2
  prev = f32[5,4] get-tuple-element(p), index=3
  fi = f32[] convert(i)
  fb = f32[4] broadcast(fi), dimensions={}
  r = f32[4] add(row, fb)
  u = f32[1,4] reshape(r)
  z = s32[] constant(0)
  d = f32[5,4] dynamic-update-slice(buf, u, i, z)
  zero = f32[] constant(0)
  sp = f32[] reduce(prev, zero), dimensions={0,1}, to_apply=add
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[5,4], f32[4], f32[5,4], f32[]) tuple(i1, d, row, d, sp)
}

cond {
  p = (s32[], f32[5,4], f32[4], f32[5,4], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  buf = f32[5,4] parameter(0)
  row = f32[4] parameter(1)
  z = s32[] constant(0)
  zf = f32[] constant(0)
  t = (s32[], f32[5,4], f32[4], f32[5,4], f32[]) tuple(z, buf, row, buf, zf)
  w = (s32[], f32[5,4], f32[4], f32[5,4], f32[]) while(t), condition=cond, body=body
  a = f32[5,4] get-tuple-element(w), index=1
  b = f32[5,4] get-tuple-element(w), index=3
  s = f32[] get-tuple-element(w), index=4
  ROOT r = (f32[5,4], f32[5,4], f32[]) tuple(a, b, s)
}
"""


def test_dus_result_used_twice_is_not_in_place(monkeypatch):
    buf, row = _inputs()
    kept = buf.copy()
    count = _Count(monkeypatch)
    outs, _ = _both(DUS_USED_TWICE, [buf, row], monkeypatch, {})
    assert count.writing == 0
    e = _loop_expected(kept, row)
    _same(outs[:2], [e, e])
    _same([buf], [kept])


# The old buffer is also read (a dynamic-slice: a NumPy view) after the update in the plan's order: an
# in-place write would change what the view shows.
GTE_USED_TWICE = """HloModule gte_twice

body {
  p = (s32[], f32[5,4], f32[4], f32[1,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  buf = f32[5,4] get-tuple-element(p), index=1
  row = f32[4] get-tuple-element(p), index=2
  fi = f32[] convert(i)
  fb = f32[4] broadcast(fi), dimensions={}
  r = f32[4] add(row, fb)
  u = f32[1,4] reshape(r)
  z = s32[] constant(0)
  d = f32[5,4] dynamic-update-slice(buf, u, i, z)
  old = f32[1,4] dynamic-slice(buf, i, z), dynamic_slice_sizes={1,4}
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[5,4], f32[4], f32[1,4]) tuple(i1, d, row, old)
}

cond {
  p = (s32[], f32[5,4], f32[4], f32[1,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  buf = f32[5,4] parameter(0)
  row = f32[4] parameter(1)
  z = s32[] constant(0)
  o = f32[1,4] constant({{0,0,0,0}})
  t = (s32[], f32[5,4], f32[4], f32[1,4]) tuple(z, buf, row, o)
  w = (s32[], f32[5,4], f32[4], f32[1,4]) while(t), condition=cond, body=body
  a = f32[5,4] get-tuple-element(w), index=1
  b = f32[1,4] get-tuple-element(w), index=3
  ROOT r = (f32[5,4], f32[1,4]) tuple(a, b)
}
"""


def test_gte_used_twice_is_not_in_place(monkeypatch):
    buf, row = _inputs()
    kept = buf.copy()
    outs, _ = _both(GTE_USED_TWICE, [buf, row], monkeypatch, {})
    _same(outs, [_loop_expected(kept, row), kept[4:5]])
    # two get-tuple-elements of the same index: not in place either
    two = GTE_USED_TWICE.replace("  old = f32[1,4] dynamic-slice(buf, i, z)",
                                 "  buf2 = f32[5,4] get-tuple-element(p), index=1\n"
                                 "  old = f32[1,4] dynamic-slice(buf2, i, z)")
    outs, _ = _both(two, [buf, row], monkeypatch, {})
    _same(outs, [_loop_expected(kept, row), kept[4:5]])


# The body's parameter goes whole to a call (which reads the buffer): not in place.
PARAM_TO_CALL = LOOP.replace("""  d = f32[5,4] dynamic-update-slice(buf, u, i, z)""",
                             """  d = f32[5,4] dynamic-update-slice(buf, u, i, z)
  peek = f32[5,4] call(p), to_apply=peek""").replace("""cond {""", """peek {
  q = (s32[], f32[5,4], f32[4]) parameter(0)
  ROOT b = f32[5,4] get-tuple-element(q), index=1
}

cond {""").replace("tuple(i1, d, row)", "tuple(i1, d, row, peek)").replace(
    "(s32[], f32[5,4], f32[4]) tuple(i1", "(s32[], f32[5,4], f32[4], f32[5,4]) tuple(i1")


def test_parameter_passed_whole_is_not_in_place(monkeypatch):
    m = _module(PARAM_TO_CALL.replace("ROOT t = (s32[], f32[5,4], f32[4], f32[5,4])",
                                      "ROOT t = (s32[], f32[5,4], f32[4])").replace(
        "tuple(i1, d, row, peek)", "tuple(i1, d, row)"))
    assert in_place.in_place_elements(m.computation("body"), {c.name: c for c in m.computations}) is None
    buf, row = _inputs()
    outs, _ = _both(m, [buf, row], monkeypatch, {})
    _same(outs, [_loop_expected(buf, row)])


# The computation that writes is shared: called in the loop body (in place) and in the entry on the
# caller's buffer (must copy); the body is also called directly from the entry.
SHARED = """HloModule shared

put {
  b = f32[5,4] parameter(0)
  u = f32[1,4] parameter(1)
  i = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT d = f32[5,4] dynamic-update-slice(b, u, i, z)
}

body {
  p = (s32[], f32[5,4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  buf = f32[5,4] get-tuple-element(p), index=1
  row = f32[4] get-tuple-element(p), index=2
  fi = f32[] convert(i)
  fb = f32[4] broadcast(fi), dimensions={}
  r = f32[4] add(row, fb)
  u = f32[1,4] reshape(r)
  c = f32[5,4] copy(buf)
  d = f32[5,4] call(c, u, i), to_apply=put
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[5,4], f32[4]) tuple(i1, d, row)
}

cond {
  p = (s32[], f32[5,4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  buf = f32[5,4] parameter(0)
  row = f32[4] parameter(1)
  z = s32[] constant(0)
  t = (s32[], f32[5,4], f32[4]) tuple(z, buf, row)
  w = (s32[], f32[5,4], f32[4]) while(t), condition=cond, body=body
  r = f32[5,4] get-tuple-element(w), index=1
  three = s32[] constant(3)
  ur = f32[1,4] reshape(row)
  direct = f32[5,4] call(buf, ur, three), to_apply=put
  once = (s32[], f32[5,4], f32[4]) call(t), to_apply=body
  once_buf = f32[5,4] get-tuple-element(once), index=1
  ROOT out = (f32[5,4], f32[5,4], f32[5,4], f32[5,4]) tuple(r, direct, once_buf, buf)
}
"""


def test_shared_computations_stay_copying_elsewhere(monkeypatch):
    buf, row = _inputs()
    kept = buf.copy()
    outs, exe = _both(SHARED, [buf, row], monkeypatch, {"w": (1,)})
    direct = kept.copy()
    direct[3] = row
    once = kept.copy()
    once[0] = row
    _same(outs, [_loop_expected(kept, row), direct, once, kept])
    _same([buf], [kept])
    assert "put [in place: parameters 0]" in exe.ctx.plan_sources and "put" in exe.ctx.plan_sources


# An inner scan inside an outer loop: the inner loop starts from the outer loop's (unchanged) buffer
# in every outer iteration.
NESTED = """HloModule nested

inner_body {
  p = (s32[], f32[5,4], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  buf = f32[5,4] get-tuple-element(p), index=1
  k = f32[] get-tuple-element(p), index=2
  fi = f32[] convert(i)
  v = f32[] add(fi, k)
  u = f32[1,4] broadcast(v), dimensions={}
  z = s32[] constant(0)
  d = f32[5,4] dynamic-update-slice(buf, u, i, z)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[5,4], f32[]) tuple(i1, d, k)
}

inner_cond {
  p = (s32[], f32[5,4], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

outer_body {
  p = (s32[], f32[5,4], f32[5,4]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  base = f32[5,4] get-tuple-element(p), index=1
  acc = f32[5,4] get-tuple-element(p), index=2
  z = s32[] constant(0)
  fj = f32[] convert(j)
  ten = f32[] constant(10)
  k = f32[] multiply(fj, ten)
  ti = (s32[], f32[5,4], f32[]) tuple(z, base, k)
  w = (s32[], f32[5,4], f32[]) while(ti), condition=inner_cond, body=inner_body
  filled = f32[5,4] get-tuple-element(w), index=1
  acc1 = f32[5,4] add(acc, filled)
  one = s32[] constant(1)
  j1 = s32[] add(j, one)
  ROOT t = (s32[], f32[5,4], f32[5,4]) tuple(j1, base, acc1)
}

outer_cond {
  p = (s32[], f32[5,4], f32[5,4]) parameter(0)
  j = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(j, n), direction=LT
}

ENTRY e {
  base = f32[5,4] parameter(0)
  z = s32[] constant(0)
  zero = f32[] constant(0)
  acc = f32[5,4] broadcast(zero), dimensions={}
  t = (s32[], f32[5,4], f32[5,4]) tuple(z, base, acc)
  w = (s32[], f32[5,4], f32[5,4]) while(t), condition=outer_cond, body=outer_body
  b = f32[5,4] get-tuple-element(w), index=1
  a = f32[5,4] get-tuple-element(w), index=2
  ROOT r = (f32[5,4], f32[5,4]) tuple(b, a)
}
"""


def test_nested_loops(monkeypatch):
    base, _ = _inputs()
    kept = base.copy()
    outs, exe = _both(NESTED, [base], monkeypatch, {"w": (1,)})  # the inner loop's buffer only
    acc = np.zeros((5, 4), np.float32)
    for j in range(3):
        filled = kept.copy()
        for i in range(4):
            filled[i] = np.float32(i) + np.float32(j * 10)
        acc = acc + filled
    _same(outs, [kept, acc])
    _same([base], [kept])


TWO_WRITES_CLAMPED = LOOP.replace("""  d = f32[5,4] dynamic-update-slice(buf, u, i, z)""",
                                  """  d0 = f32[5,4] dynamic-update-slice(buf, u, i, z)
  big = s32[] constant(100)
  far = s32[] add(i, big)
  nu = f32[2,4] broadcast(fi), dimensions={}
  d = f32[5,4] dynamic-update-slice(d0, nu, far, z)""")


def test_two_writes_per_iteration_with_clamped_starts(monkeypatch):
    buf, row = _inputs()
    count = _Count(monkeypatch)
    outs, _ = _both(TWO_WRITES_CLAMPED, [buf, row], monkeypatch, {"w": (1,)})
    assert count.writing == 10
    e = buf.copy()
    for i in range(5):
        e[i] = row + np.float32(i)
        e[3:5] = np.float32(i)  # start 100 + i clamps to 3
    _same(outs, [e])


def test_zero_iterations(monkeypatch):
    text = LOOP.replace("n = s32[] constant(5)", "n = s32[] constant(0)")
    buf, row = _inputs()
    outs, _ = _both(text, [buf, row], monkeypatch, {"w": (1,)})
    _same(outs, [buf])
    assert not np.shares_memory(outs[0], buf)


# --------------------------------------------------------------------------------------------------
# Observers


class _Keeper(evaluator.Observer):
    """Keeps every value of the dynamic-update-slice, as it was handed over (no copy)."""

    def __init__(self):
        self.kept = []

    def after(self, ins, value, operands):
        if ins.opcode == "dynamic-update-slice":
            self.kept.append(value)


def test_observers_that_keep_values_see_every_value_as_it_was(monkeypatch):
    buf, row = _inputs()
    keeper = _Keeper()
    exe = _build(LOOP, monkeypatch, observer=keeper)
    assert exe.ctx.in_place_loops == {}  # observers get the copying path unless they allow in place
    outs = exe(buf, row)
    _same(outs, [_loop_expected(buf, row)])
    assert len(keeper.kept) == 5
    for i, v in enumerate(keeper.kept):
        _same([v[i + 1:]], [buf[i + 1:]])  # rows after i not yet written at iteration i
    # what allows_in_place = True means: kept values are the one buffer, seen at its last state
    keeper = _Keeper()
    keeper.allows_in_place = True
    exe = _build(LOOP, monkeypatch, observer=keeper)
    assert exe.ctx.in_place_loops == {"w": (1,)}
    _same(exe(buf, row), outs)
    assert all(v is keeper.kept[0] for v in keeper.kept)


def test_dump_and_trace_use_the_copying_path_progress_and_profile_do_not(tmp_path, monkeypatch):
    buf, row = _inputs()
    m = _module(LOOP)
    session = debug.Session(m, dump_dir=str(tmp_path), only="d")
    exe = _build(m, monkeypatch, observer=session)
    assert exe.ctx.in_place_loops == {}
    r = debug.execute(exe, session, [buf, row])
    _same(r.results, [_loop_expected(buf, row)])
    files = [e["file"] for e in r.dump.entries if e["name"] == "d"]
    assert len(files) == 5
    for i, f in enumerate(files):
        v = np.load(tmp_path / f)
        _same([v[i + 1:]], [buf[i + 1:]])
        _same([v[:i + 1]], [_loop_expected(buf, row, i + 1)[:i + 1]])
    for obs in (debug.Session(m, trace=True), debug.Session(m, trace_range=True)):
        assert _build(m, monkeypatch, observer=obs).ctx.in_place_loops == {}
    for obs in (debug.Session(m, profile=True), debug.ProgressObserver(m)):
        exe = _build(m, monkeypatch, observer=obs)
        assert exe.ctx.in_place_loops == {"w": (1,)}
        _same(exe(buf, row), [_loop_expected(buf, row)])
    assert obs.loop_iterations == {"w": 5}


# Two buffers that trade places every iteration: the DUS result goes to the OTHER element, so the
# written array would be the caller's one in the next iteration: not in place.
PING_PONG = """HloModule ping_pong

body {
  p = (s32[], f32[5,4], f32[5,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = f32[5,4] get-tuple-element(p), index=1
  b = f32[5,4] get-tuple-element(p), index=2
  fi = f32[] convert(i)
  u = f32[1,4] broadcast(fi), dimensions={}
  z = s32[] constant(0)
  d = f32[5,4] dynamic-update-slice(a, u, i, z)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[5,4], f32[5,4]) tuple(i1, b, d)
}

cond {
  p = (s32[], f32[5,4], f32[5,4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  a = f32[5,4] parameter(0)
  b = f32[5,4] parameter(1)
  z = s32[] constant(0)
  t = (s32[], f32[5,4], f32[5,4]) tuple(z, a, b)
  w = (s32[], f32[5,4], f32[5,4]) while(t), condition=cond, body=body
  wa = f32[5,4] get-tuple-element(w), index=1
  wb = f32[5,4] get-tuple-element(w), index=2
  ROOT r = (f32[5,4], f32[5,4]) tuple(wa, wb)
}
"""


def test_buffers_trading_places_are_not_in_place(monkeypatch):
    a, b = _inputs()[0], _inputs()[0] * 2
    ka, kb = a.copy(), b.copy()
    outs, _ = _both(PING_PONG, [a, b], monkeypatch, {})
    _same([a, b], [ka, kb])
    x, y = ka.copy(), kb.copy()
    for i in range(4):
        d = x.copy()
        d[i] = np.float32(i)
        x, y = y, d
    _same(outs, [x, y])


# The writing call returns a tuple (like JAX's closed_call of a fori_loop body) and its buffer is
# taken out twice: the second copy is carried and summed in the next iteration, after the write.
CALL_TUPLE_TAKEN_TWICE = """HloModule taken_twice

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

step {
  b = f32[5,4] parameter(0)
  r = f32[4] parameter(1)
  i = s32[] parameter(2)
  u = f32[1,4] reshape(r)
  z = s32[] constant(0)
  d = f32[5,4] dynamic-update-slice(b, u, i, z)
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[5,4]) tuple(i1, d)
}

body {
  p = (s32[], f32[5,4], f32[4], f32[5,4], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  buf = f32[5,4] get-tuple-element(p), index=1
  row = f32[4] get-tuple-element(p), index=2
  prev = f32[5,4] get-tuple-element(p), index=3
  c = (s32[], f32[5,4]) call(buf, row, i), to_apply=step
  i1 = s32[] get-tuple-element(c), index=0
  x1 = f32[5,4] get-tuple-element(c), index=1
  x2 = f32[5,4] get-tuple-element(c), index=1
  zero = f32[] constant(0)
  s = f32[] reduce(prev, zero), dimensions={0,1}, to_apply=add
  ROOT t = (s32[], f32[5,4], f32[4], f32[5,4], f32[]) tuple(i1, x1, row, x2, s)
}

cond {
  p = (s32[], f32[5,4], f32[4], f32[5,4], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  buf = f32[5,4] parameter(0)
  row = f32[4] parameter(1)
  z = s32[] constant(0)
  zf = f32[] constant(0)
  t = (s32[], f32[5,4], f32[4], f32[5,4], f32[]) tuple(z, buf, row, buf, zf)
  w = (s32[], f32[5,4], f32[4], f32[5,4], f32[]) while(t), condition=cond, body=body
  a = f32[5,4] get-tuple-element(w), index=1
  s = f32[] get-tuple-element(w), index=4
  ROOT r = (f32[5,4], f32[]) tuple(a, s)
}
"""


def test_call_result_taken_twice_is_not_in_place(monkeypatch):
    buf = np.ones((5, 4), np.float32)
    row = np.full(4, 2, np.float32)
    outs, _ = _both(CALL_TUPLE_TAKEN_TWICE, [buf, row], monkeypatch, {})
    before_last = buf.copy()
    before_last[:4] = row  # the sum is of the buffer before the last iteration's write
    _same(outs, [np.full((5, 4), 2, np.float32), np.float32(before_last.sum())])


def test_profile_counts_no_bytes_for_in_place_writes():
    """--profile keeps the in-place path; a write into the loop buffer allocates nothing, and the
    copying path allocates the whole buffer (50 x 8 f32) at every iteration."""
    from hlo_interp import debug
    m = hlo_interp.parse(JAX_FORI_BEFORE)

    def dus_bytes():
        p = debug.profile(m, np.float32(1.5))
        (row,) = [r for r in p.rows if r[2] == "dynamic-update-slice"]
        return row[3], row[5]
    assert dus_bytes() == (50, 0)
    old = evaluator.IN_PLACE_LOOPS
    evaluator.IN_PLACE_LOOPS = False
    try:
        assert dus_bytes() == (50, 50 * 50 * 8 * 4)
    finally:
        evaluator.IN_PLACE_LOOPS = old
