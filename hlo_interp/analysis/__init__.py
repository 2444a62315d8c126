"""What `hlo info` counts, apart from how it shows it (info.py assembles the report, info_text.py writes it):

- calls.py    who calls which computation, and in which role (fusion, while body, reducer, ...);
- cost.py     XLA's HloCostAnalysis: flops, transcendentals, bytes accessed;
- memory.py   the buffers an instruction defines, their physical sizes, the peak live bytes;
- memo.py     a per-shape memo shared by the above.
"""
