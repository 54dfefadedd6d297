"""Permutation(n, seed): the order `extshuffle -i 0-(n-1) --seed seed`
writes, addressed by position (p[i], p[a:b:s]) and by record (position())."""

import operator

from . import _native


def epoch_seed(seed, epoch):
    """The seed of epoch `epoch` of a run seeded `seed` (both unsigned 64-bit):
    mix(mix(seed) ^ epoch), mix being SplitMix64's output function
    (docs/python.md). Distinct epochs of one seed never share a seed."""
    return _native.epoch_seed(operator.index(seed) % (1 << 64), operator.index(epoch) % (1 << 64))


BLOCK = 1 << 16  # positions computed at a time when iterating


class Permutation:
    """The permutation P(seed, n) of permutation version 2: p[i] is the record
    (input index) at output position i. leaf_records and fanout are the
    tool's testing knobs (--leaf-records, --fanout): they change the order."""

    def __init__(self, n, seed, *, leaf_records=None, fanout=None):
        n = operator.index(n)
        seed = operator.index(seed)
        if n < 0:
            raise ValueError("n must be >= 0")
        if not 0 <= seed < 1 << 64:
            raise ValueError("seed must be an unsigned 64-bit number")
        self._native = _native.Permutation(n, seed, leaf_records or 0, fanout or 0)
        self._knobs = (leaf_records, fanout)

    @property
    def n(self):
        return self._native.n

    @property
    def seed(self):
        return self._native.seed

    def __len__(self):
        return self._native.n

    def __repr__(self):
        return f"extshuffle.Permutation(n={self.n}, seed={self.seed})"

    def __reduce__(self):
        return (_rebuild, (self.n, self.seed) + self._knobs)

    def __getitem__(self, key):
        if isinstance(key, slice):
            start, stop, step = key.indices(self.n)
            count = len(range(start, stop, step))
            if count == 0:
                return self._native.positions(0, 1, 0)
            if step > 0:
                return self._native.positions(start, step, count)
            # Descending: the ascending positions, reversed.
            return self._native.positions(start + (count - 1) * step, -step, count)[::-1].copy()
        return self._native.at(_index(key, self.n, "permutation index"))

    def blocks(self, block=BLOCK):
        """The whole order as numpy uint64 arrays of `block` positions."""
        for first in range(0, self.n, block):
            yield self._native.positions(first, 1, min(block, self.n - first))

    def __iter__(self):
        for values in self.blocks():
            yield from values.tolist()

    def position(self, record):
        """Where record `record` lands: p[p.position(r)] == r."""
        return self._native.position(_index(record, self.n, "record"))


def _index(value, n, what):
    """`value` as an index into n things, negative ones from the end."""
    value = operator.index(value)
    if value < 0:
        value += n
    if not 0 <= value < n:
        raise IndexError(f"{what} out of range")
    return value


def _rebuild(n, seed, leaf_records, fanout):
    return Permutation(n, seed, leaf_records=leaf_records, fanout=fanout)
