"""``python -m graders.pool``: the template process that forks the pool's workers."""

from graders.pool.process import serve

serve()
