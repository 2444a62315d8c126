"""What `hlo info` counts, apart from how it shows it (info.py assembles the report, info_text.py writes it):

- calls.py    which computations an instruction calls, and in which role (fusion, while body, reducer, ...);
- index.py    one pass over each computation that the others share: name tables, who calls whom,
              instruction signatures, which buffer each value lives in and each buffer's last use;
- cost.py     XLA's HloCostAnalysis: flops, transcendentals, bytes accessed;
- memory.py   the buffers an instruction defines, their physical sizes, the peak live bytes;
- memo.py     a per-shape memo shared by the above.
"""
