"""The HLO text syntax: text -> IR and IR -> text, knowing no shape rules (hlo_interp.frontend adds the
shapes a text omits).

    lexer.py       tokens, with a first-character dispatch and whole-line fast tokens
    driver.py      the LALR(1) loop over the precomputed table (lalr_table.py, from grammar/hlo.lark)
    parser.py      the grammar's rules -> IR, with every location the checks report at
    attributes.py  generic attribute syntax -> typed values, per the opcode table's attribute kinds
    literals.py    constant bodies <-> values
    printer.py     IR -> canonical text
"""
