"""DistributedSampler: torch.utils.data.DistributedSampler's semantics with
the epoch's order drawn from Permutation(n, epoch_seed(seed, epoch)) a block
at a time, in memory independent of n (torch draws randperm(n) on every
rank at every epoch). The package does not need torch."""

import math
import operator
import sys

from ._permutation import BLOCK, Permutation, epoch_seed


def _distributed_defaults():
    """(world size, rank) of torch.distributed when it is initialised, else (1, 0)."""
    dist = sys.modules.get("torch.distributed")
    if dist is None:
        try:
            import torch.distributed as dist
        except ImportError:
            return 1, 0
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size(), dist.get_rank()
    return 1, 0


class DistributedSampler:
    """Samples of rank `rank` of `num_replicas` for one epoch, as torch's
    DistributedSampler gives them: the epoch's order padded by wrapping
    around to a multiple of num_replicas (or cut to one with drop_last),
    rank r taking padded positions r, r + W, r + 2W, ...; set_epoch() before
    each epoch. state_dict()/load_state_dict() resume mid-epoch."""

    def __init__(self, dataset_or_len, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False,
                 **knobs):
        n = dataset_or_len if isinstance(dataset_or_len, int) else len(dataset_or_len)
        n = operator.index(n)
        if num_replicas is None or rank is None:
            world, this_rank = _distributed_defaults()
            num_replicas = world if num_replicas is None else num_replicas
            rank = this_rank if rank is None else rank
        if num_replicas < 1:
            raise ValueError(f"Invalid num_replicas {num_replicas}, expected at least 1")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset_len = n
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.shuffle = shuffle
        self.seed = operator.index(seed) % (1 << 64)
        self.drop_last = drop_last
        self._knobs = knobs  # leaf_records, fanout: the tool's testing knobs
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self._start = 0  # samples of this epoch to skip (load_state_dict)
        self._yielded = 0  # samples of this epoch handed out so far

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        self.epoch = epoch
        self._start = 0
        self._yielded = 0

    def permutation(self, epoch=None):
        """The epoch's order of the dataset's records (shuffle=True)."""
        epoch = self.epoch if epoch is None else epoch
        return Permutation(self.dataset_len, epoch_seed(self.seed, epoch), **self._knobs)

    def __iter__(self):
        start, self._start = self._start, 0
        self._yielded = start
        for block in self._blocks(start):
            for index in block.tolist():
                self._yielded += 1
                yield index

    def _blocks(self, start):
        """This rank's samples from `start` on, as numpy arrays."""
        import numpy as np
        n, w, r = self.dataset_len, self.num_replicas, self.rank
        order = self.permutation() if self.shuffle else None
        for first in range(start, self.num_samples, BLOCK):
            count = min(BLOCK, self.num_samples - first)
            padded_first = r + first * w  # padded position of sample `first`
            # Samples whose padded position lies in [0, n) are read with one
            # stride; the padding wraps around to the order's start.
            direct = max(0, min(count, -(-(n - padded_first) // w))) if padded_first < n else 0
            parts = []
            if direct:
                parts.append(order._native.positions(padded_first, w, direct) if order is not None
                             else np.arange(padded_first, padded_first + direct * w, w, dtype=np.uint64))
            wrapped = [(padded_first + k * w) % n for k in range(direct, count)]
            if wrapped:
                parts.append(np.array([order[i] for i in wrapped] if order is not None else wrapped, dtype=np.uint64))
            yield np.concatenate(parts) if len(parts) > 1 else parts[0]

    def state_dict(self, consumed=None):
        """Where this rank is: the epoch and the samples of it already
        consumed (by default those the iterator has handed out; a DataLoader
        fetches ahead of the training loop, so pass the count it consumed)."""
        position = self._yielded if consumed is None else operator.index(consumed)
        return {"epoch": self.epoch, "position": position, "seed": self.seed,
                "num_replicas": self.num_replicas, "rank": self.rank, "dataset_len": self.dataset_len}

    def load_state_dict(self, state):
        """Resume: the next iteration starts at state["position"] of state["epoch"]."""
        for key in ("seed", "num_replicas", "dataset_len"):
            if key in state and state[key] != getattr(self, key):
                raise ValueError(f"state_dict of a sampler with {key} {state[key]}, this one has {getattr(self, key)}")
        self.epoch = state["epoch"]
        self._start = min(operator.index(state["position"]), self.num_samples)
        self._yielded = self._start
