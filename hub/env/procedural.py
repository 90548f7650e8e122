"""Building blocks for procedural environments: finite content spaces visited without repeats,
and a content-hash split.

Each difficulty level is a finite space of problems, numbered ``0 .. size-1``. A seed's tasks
visit that space in a keyed shuffled order (a bijection on the next power of two, skipping
values past ``size``), so no problem repeats until all of the space has been used, with
constant memory. A problem belongs to ``train`` or ``test`` by a hash of its canonical content
(not of the seed or the index), so the two splits never share a problem, whatever the seeds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

__all__ = ["SPLITS", "shuffled", "split_of", "stream_key"]

SPLITS = ("train", "test")
_ROUNDS = (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB)


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def stream_key(*parts: object) -> int:
    """A 64-bit key from ``parts`` (stable across processes and platforms)."""
    return _digest(":".join(str(p) for p in parts))


def split_of(content: str) -> str:
    """The split a problem belongs to, from its canonical content alone."""
    return SPLITS[_digest("split:" + content) & 1]


def shuffled(size: int, key: int) -> Iterator[int]:
    """Every integer in ``0 .. size-1`` exactly once, in an order fixed by ``key``.

    ``x -> x ^ k``, multiplication by an odd constant and ``x ^= x >> s`` are each bijections
    on ``bits``-bit integers, so their composition permutes ``0 .. 2**bits - 1``; skipping the
    values ``>= size`` leaves a permutation of ``0 .. size-1`` (at most half are skipped).
    """
    bits = max(2, (size - 1).bit_length())
    mask = (1 << bits) - 1
    shift = max(1, (bits + 1) // 2)
    k0, k1, k2 = ((key >> (20 * i)) & mask for i in range(len(_ROUNDS)))
    m0, m1, m2 = _ROUNDS
    for n in range(1 << bits):  # the three rounds written out: this loop is the generator's hot path
        x = ((n ^ k0) * m0) & mask
        x ^= x >> shift
        x = ((x ^ k1) * m1) & mask
        x ^= x >> shift
        x = ((x ^ k2) * m2) & mask
        x ^= x >> shift
        if x < size:
            yield x
