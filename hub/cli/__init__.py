"""The ``verihub`` command line: the top layer. It may import anything; nothing imports it.

Reading guide:

- :mod:`hub.cli.app`: the Typer application; every command module does ``@app.command(...)``.
- :mod:`hub.cli.entry`: :func:`main`, the console script; registers the command modules, turns
  errors into one line and exit codes (0 ok, 1 verihub error, 2 usage, 130 interrupted).
- One module per area: :mod:`~hub.cli.envs` (list, info, search), :mod:`~hub.cli.hubcmds`
  (install, uninstall), :mod:`~hub.cli.run` (eval, resume, show, regrade),
  :mod:`~hub.cli.export` (export, eval-sharded), :mod:`~hub.cli.authoring` (init, check,
  calibrate, submit, verify-submission), :mod:`~hub.cli.leaderboard`; :mod:`~hub.cli.progress`
  draws progress bars.
- :mod:`hub.cli.options`: options shared by commands (``--hub``, ``--token``, ``--env-arg``) and
  ``flags_command``, which hands a command its flags as one dataclass (:mod:`hub.cli.eval_flags`
  for ``eval``).

A new command goes into the module of its area (or a new module registered in
:func:`hub.cli.entry._register`).
"""

from hub.cli.app import app
from hub.cli.entry import main

__all__ = ["app", "main"]
