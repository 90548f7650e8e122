"""Print, one per line, the third-party requirements that bundled environments declare (verihub excluded).

Environments are installed with --no-deps (they depend on the local, editable verihub); this
lists what else they need so scripts/install.sh can install it in one resolver pass.
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


def main(root: str) -> None:
    reqs: set[str] = set()
    for pyproject in sorted(Path(root).glob("*/pyproject.toml")):
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        for req in data.get("project", {}).get("dependencies", []):
            name = req.split(";")[0].strip()
            if not name.lower().startswith("verihub"):
                reqs.add(name)
    for req in sorted(reqs):
        print(req)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "environments")
