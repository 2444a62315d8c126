"""The README's opcode table is generated from the code (tools/opcode_table.py) and must be current."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_opcode_table_is_current():
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "opcode_table.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
