"""Permutation(n, seed): the order `extshuffle -i 0-(n-1) --seed seed`
writes, addressed by position (p[i], p[a:b:s], p[index_array]) and by
record (position())."""

import operator

import numpy as np

from . import _native


def epoch_seed(seed, epoch):
    """The seed of epoch `epoch` of a run seeded `seed` (both unsigned 64-bit):
    mix(mix(seed) ^ epoch), mix being SplitMix64's output function
    (docs/python.md). Distinct epochs of one seed never share a seed."""
    return _native.epoch_seed(operator.index(seed) % (1 << 64), operator.index(epoch) % (1 << 64))


BLOCK = 1 << 16  # positions computed at a time when iterating
_DTYPES = (np.dtype(np.uint64), np.dtype(np.int64))


class Permutation:
    """The permutation P(seed, n) of permutation version 2: p[i] is the record
    (input index) at output position i. Arrays come back as `dtype`
    (numpy.uint64, or numpy.int64: what torch indexes with). leaf_records
    and fanout are the tool's testing knobs (--leaf-records, --fanout): they
    change the order. threads: cores a long call may use (None: all)."""

    def __init__(self, n, seed, *, leaf_records=None, fanout=None, dtype=np.uint64, threads=None):
        n = operator.index(n)
        seed = operator.index(seed)
        if n < 0:
            raise ValueError("n must be >= 0")
        if not 0 <= seed < 1 << 64:
            raise ValueError("seed must be an unsigned 64-bit number")
        self._dtype = np.dtype(dtype)
        if self._dtype not in _DTYPES:
            raise ValueError(f"dtype must be uint64 or int64, not {self._dtype}")
        self._threads = 0 if threads is None else operator.index(threads)
        if self._threads < 0:
            raise ValueError("threads must be >= 1 (or None: every core)")
        self._native = _native.Permutation(n, seed, leaf_records or 0, fanout or 0)
        self._knobs = (leaf_records, fanout)

    @property
    def n(self):
        return self._native.n

    @property
    def seed(self):
        return self._native.seed

    @property
    def dtype(self):
        return self._dtype

    def __len__(self):
        return self._native.n

    def __repr__(self):
        return f"extshuffle.Permutation(n={self.n}, seed={self.seed})"

    def __reduce__(self):
        return (_rebuild, (self.n, self.seed) + self._knobs + (self._dtype.str, self._threads or None))

    def __getitem__(self, key):
        if isinstance(key, slice):
            return self._slice(*key.indices(self.n))
        try:
            position = operator.index(key)
        except TypeError:
            return self._take(key)
        return self._native.at(_index(position, self.n, "permutation index"))

    def _slice(self, start, stop, step):
        count = len(range(start, stop, step))
        out = np.empty(count, dtype=self._dtype)
        if count == 0:
            return out
        if count == 1:
            step = 1  # one position: any step, those past 64 bits too
        if step > 0:
            self._native.positions_into(start, step, out, self._threads)
            return out
        # Descending: the ascending positions, reversed.
        self._native.positions_into(start + (count - 1) * step, -step, out, self._threads)
        return out[::-1].copy()

    def _take(self, key):
        """p[array]: the records at an array of positions (any shape, any
        order, negative from the end) or at a boolean mask's True places."""
        index = np.asarray(key)
        if index.dtype == np.bool_:
            if index.shape != (self.n,):
                raise IndexError(f"boolean index of shape {index.shape} for a permutation of {self.n}")
            return self._records_sorted(np.flatnonzero(index).astype(np.uint64))
        if not np.issubdtype(index.dtype, np.integer):
            if index.size:
                raise IndexError("arrays used as indices must be of integer (or boolean) type")
            index = index.astype(np.int64)
        flat = index.ravel()
        if flat.size and np.issubdtype(flat.dtype, np.signedinteger):
            flat = np.where(flat < 0, flat.astype(np.int64) + self.n, flat)
            if flat.min() < 0:
                raise IndexError("permutation index out of range")
        if flat.size and int(flat.max()) >= self.n:
            raise IndexError("permutation index out of range")
        positions = flat.astype(np.uint64)
        order = np.argsort(positions, kind="stable")
        records = self._records_sorted(positions[order])
        out = np.empty(flat.size, dtype=self._dtype)
        out[order] = records
        return out.reshape(index.shape)

    def _records_sorted(self, positions):
        """The records at ascending uint64 positions (overwritten), as dtype."""
        positions = np.ascontiguousarray(positions, dtype=np.uint64)
        self._native.records_into(positions, self._threads)
        return positions if self._dtype == positions.dtype else positions.view(self._dtype)

    def blocks(self, block=BLOCK):
        """The whole order as arrays (of dtype) of `block` positions."""
        for first in range(0, self.n, block):
            out = np.empty(min(block, self.n - first), dtype=self._dtype)
            self._native.positions_into(first, 1, out, self._threads)
            yield out

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


def _rebuild(n, seed, leaf_records, fanout, dtype="<u8", threads=None):
    return Permutation(n, seed, leaf_records=leaf_records, fanout=fanout, dtype=dtype, threads=threads)
