"""DistributedSampler: torch.utils.data.DistributedSampler's semantics with
the epoch's order drawn from Permutation(n, epoch_seed(seed, epoch)) a block
at a time, in memory independent of n, and a resume state of a few integers
that continues the epoch exactly at any world size (docs/python.md,
"Resuming"). A subclass of torch's own sampler when torch imports; the
package works without torch."""

import operator

import numpy as np

from ._permutation import BLOCK, Permutation, epoch_seed

try:
    from torch.utils.data import DistributedSampler as _TorchSampler
except ImportError:  # no torch: a plain class with the same interface
    _TorchSampler = object

PERMUTATION_VERSION = 2  # the version the state records; a state of another is refused

# The orders the samplers of this process read, shared: ranks simulated in one
# process, or a sampler rebuilt each epoch, set each order's caches up once
# (a permutation's calls are serialised; it is safe to share).
_SHARED_ORDERS = {}


def _distributed():
    """torch.distributed, or RuntimeError as torch's sampler raises without it."""
    try:
        import torch.distributed as dist
    except ImportError:
        dist = None
    if dist is None or not dist.is_available():
        raise RuntimeError("Requires distributed package to be available")
    return dist


class _Iteration:
    """One iteration of a sampler: its epoch, the global position it began
    at, and how many samples it has handed out."""

    def __init__(self, epoch, start):
        self.epoch, self.start = epoch, start
        self.before = 0  # samples of the blocks before the current one
        self.block = None  # the current block's list iterator
        self.block_size = 0

    def handed_out(self):
        if self.block is None:
            return self.before
        return self.before + self.block_size - operator.length_hint(self.block)


class DistributedSampler(_TorchSampler):
    """Samples of rank `rank` of `num_replicas` for one epoch, as torch's
    DistributedSampler gives them: the epoch's order padded by wrapping
    around to a multiple of num_replicas (or cut to one with drop_last),
    rank r taking padded positions r, r + W, r + 2W, ...; set_epoch() before
    each epoch. num_replicas and rank default to torch.distributed's world
    size and rank (RuntimeError without a process group, as torch's).

    state_dict() is {seed, epoch, position, ...}: position is the epoch's
    global position, the samples of the epoch's order that all ranks
    together have consumed. load_state_dict() continues from there at any
    num_replicas and batch size; set_epoch() of the same epoch keeps it."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False, **knobs):
        n = operator.index(dataset) if isinstance(dataset, (int, np.integer)) else len(dataset)
        if num_replicas is None:
            num_replicas = _distributed().get_world_size()
        if rank is None:
            rank = _distributed().get_rank()
        num_replicas, rank = operator.index(num_replicas), operator.index(rank)
        if num_replicas < 1:
            raise ValueError(f"Invalid num_replicas {num_replicas}, expected at least 1")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        unknown = set(knobs) - {"leaf_records", "fanout"}
        if unknown:
            raise TypeError(f"unexpected keyword arguments {sorted(unknown)}")
        self.dataset = dataset
        self.dataset_len = n
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.shuffle = bool(shuffle)
        self.seed = operator.index(seed) % (1 << 64)
        self.drop_last = bool(drop_last)
        self._knobs = {key: knobs.get(key) for key in ("leaf_records", "fanout")}
        self.num_samples = self._count(0)
        self.total_size = self.num_samples * num_replicas
        self._pending = None  # (epoch, position) loaded: where the next iteration of that epoch starts
        self._iteration = None  # the _Iteration begun last
        self._epoch_chosen = False  # set_epoch() called since the last iteration began

    def _count(self, start):
        """This rank's samples in an iteration from global position `start`:
        the rest of the order, padded by wrapping around to a multiple of
        num_replicas, or cut to one with drop_last."""
        left = max(0, self.dataset_len - start)
        return left // self.num_replicas if self.drop_last else -(-left // self.num_replicas)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """The epoch the next iteration reads. A resume position loaded for
        this same epoch is kept; for any other epoch it is dropped."""
        self.epoch = epoch
        self._epoch_chosen = True
        if self._pending is not None and self._pending[0] != epoch:
            self._pending = None

    def permutation(self, epoch=None):
        """The epoch's order of the dataset's records (shuffle=True)."""
        epoch = self.epoch if epoch is None else epoch
        key = (self.dataset_len, epoch_seed(self.seed, epoch), self._knobs["leaf_records"], self._knobs["fanout"])
        order = _SHARED_ORDERS.pop(key, None)
        if order is None:
            order = Permutation(self.dataset_len, key[1], **self._knobs)
        _SHARED_ORDERS[key] = order  # the most recently used last
        while len(_SHARED_ORDERS) > 4:
            del _SHARED_ORDERS[next(iter(_SHARED_ORDERS))]
        return order

    def __iter__(self):
        self._iteration = None  # a new iteration: state_dict() speaks of its start until it begins
        return self._iterate()

    def _iterate(self):
        # A generator: the iteration (and the resume position it takes) begins
        # at the first sample asked for, so an iterator made and dropped unread
        # (a stateful loader's restore makes one) leaves the position pending.
        start = 0
        if self._pending is not None:
            epoch, position = self._pending
            self._pending = None
            if epoch == self.epoch:
                start = position
        self._epoch_chosen = False
        iteration = self._iteration = _Iteration(self.epoch, start)
        for block in self._blocks(start):
            iteration.block = iter(block.tolist())
            iteration.block_size = block.size
            yield from iteration.block  # at C speed; handed_out() counts from the iterator's length
            iteration.before += block.size
            iteration.block = None

    def _blocks(self, start):
        """This rank's samples of an iteration from global position `start`,
        as numpy uint64 arrays of at most BLOCK: padded position g = start +
        rank + k W holds the order's record at g mod n."""
        n, w = self.dataset_len, self.num_replicas
        count = self._count(start)
        order = self.permutation() if self.shuffle else None
        for first in range(0, count, BLOCK):
            size = min(BLOCK, count - first)
            g = start + self.rank + first * w
            direct = 0 if g >= n else min(size, -(-(n - g) // w))  # samples before the padding
            out = np.empty(size, dtype=np.uint64)
            if direct:
                if order is not None:
                    order._native.positions_into(g, w, out[:direct], 0)
                else:
                    out[:direct] = np.arange(g, g + direct * w, w, dtype=np.uint64)
            if direct < size:
                wrapped = (g + np.arange(direct, size, dtype=np.uint64) * np.uint64(w)) % np.uint64(n)
                out[direct:] = order[wrapped] if order is not None else wrapped
            yield out

    def _identity(self):
        """What the order depends on besides the epoch: a state must agree."""
        return {"permutation_version": PERMUTATION_VERSION, "seed": self.seed, "dataset_len": self.dataset_len,
                "shuffle": self.shuffle, "drop_last": self.drop_last, **self._knobs}

    def state_dict(self, consumed=None):
        """Where the epoch is: {"epoch", "position", and what fixes the order}.
        position: the global position, every rank's consumed samples
        together (this rank's times num_replicas, from where the iteration
        began); the epoch's length once this rank has consumed all of its
        samples. consumed: this rank's samples the training loop has taken
        since the current iteration began (a DataLoader with workers runs
        ahead of the loop); None counts those the iterator has handed out,
        right when state_dict() is asked as each batch leaves the sampler
        (torchdata's StatefulDataLoader) or without workers."""
        iteration = self._iteration
        if iteration is not None and iteration.epoch == self.epoch:
            start = iteration.start
            taken = iteration.handed_out() if consumed is None else operator.index(consumed)
            if taken < 0:
                raise ValueError(f"consumed must be >= 0, not {taken}")
            count = self._count(start)
            position = self.dataset_len if taken >= count else start + taken * self.num_replicas
        else:
            if consumed:
                raise ValueError("consumed samples but no iteration of this epoch has begun")
            pending = self._pending
            position = pending[1] if pending is not None and pending[0] == self.epoch else 0
            if self._count(position) == 0:
                position = self.dataset_len  # nothing left from there: the epoch is done
        return {"epoch": self.epoch, "position": position, **self._identity()}

    def load_state_dict(self, state):
        """Continue from `state` (any num_replicas, any batch size): the next
        iteration of state["epoch"] starts at its global position. The
        sampler's epoch becomes state["epoch"], unless set_epoch() has chosen
        the coming epoch since the last iteration began (a loader that loads
        state as its iterator starts, torchdata's): then the position applies
        only if that epoch is the state's. Raises
        ValueError for a state of another order (seed, dataset length,
        shuffle, drop_last, knobs, permutation version)."""
        if "permutation_version" not in state or "position" not in state:
            raise ValueError("not a state_dict of extshuffle.DistributedSampler (one from before the global "
                             "position, or of another sampler)")
        for key, value in self._identity().items():
            if state.get(key) != value:
                raise ValueError(f"state_dict of a sampler with {key} {state.get(key)!r}, this one has {value!r}: "
                                 "its order is another")
        epoch, position = operator.index(state["epoch"]), operator.index(state["position"])
        if not 0 <= position <= self.dataset_len:
            raise ValueError(f"state_dict position {position} outside the epoch's {self.dataset_len} samples")
        if not self._epoch_chosen:
            self.epoch = epoch  # else set_epoch() chose the coming epoch: the position applies if it is this one
        self._pending = (epoch, position)
        self._iteration = None
