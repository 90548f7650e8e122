"""Authoring environments and the automatic reviewer.

Reading guide:

- :mod:`hub.review.scaffold` (with the ``templates`` folder): ``verihub init``.
- :mod:`hub.review.check`: ``verihub check``, the sandboxed automatic reviewer (its own guide).
- :mod:`hub.review.submit`: submission bundles (``verihub submit``, ``verify-submission``).
- :mod:`hub.review.calibrate`: per-task pass rates and the learnable band.
- :mod:`hub.review.env_tests`, :mod:`hub.review.testing`: test kits for environment packages.

Imports: :mod:`hub.env`, :mod:`hub.registry`, :mod:`hub.run`, :mod:`hub.train` (and ``graders``).
"""

__all__: list[str] = []
