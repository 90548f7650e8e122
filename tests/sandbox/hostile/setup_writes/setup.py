"""Runs at build time: writes every path listed in targets.txt (if it can)."""

from pathlib import Path

from setuptools import setup

here = Path(__file__).resolve().parent
targets = here / "targets.txt"
for line in targets.read_text().split() if targets.exists() else []:
    try:
        Path(line).write_text("written by setup.py at build time\n")
    except OSError:
        pass
setup()
