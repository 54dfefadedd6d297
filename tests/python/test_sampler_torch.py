"""DistributedSampler as torch's own: a subclass of
torch.utils.data.DistributedSampler (isinstance holds), the same error
without a process group, real gloo ranks, the package without torch, and
Lightning's rule for replacing samplers, emulated."""

import json
import subprocess
import sys

import numpy as np
import pytest

import extshuffle

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader, Dataset, RandomSampler, SequentialSampler  # noqa: E402
from torch.utils.data import DistributedSampler as TorchSampler  # noqa: E402
from records_dataset import Records  # noqa: E402


def test_is_a_torch_distributed_sampler():
    sampler = extshuffle.DistributedSampler(Records(10), num_replicas=2, rank=1)
    assert isinstance(sampler, TorchSampler)
    assert isinstance(sampler, torch.utils.data.Sampler)
    # What code written for torch's sampler reads and calls.
    assert (sampler.num_replicas, sampler.rank, sampler.num_samples, sampler.total_size) == (2, 1, 5, 10)
    assert sampler.shuffle and not sampler.drop_last and sampler.seed == 0 and len(sampler.dataset) == 10
    sampler.set_epoch(3)
    assert sampler.epoch == 3


def test_no_process_group_raises_as_torch_does():
    assert not torch.distributed.is_initialized()
    for arguments in ({}, {"num_replicas": 2}, {"rank": 0}):
        with pytest.raises(RuntimeError) as theirs:
            TorchSampler(Records(10), **arguments)
        with pytest.raises(RuntimeError) as ours:
            extshuffle.DistributedSampler(Records(10), **arguments)
        assert str(ours.value) == str(theirs.value), arguments
    extshuffle.DistributedSampler(Records(10), num_replicas=1, rank=0)  # explicit: no process group needed


RANK_PROGRAM = r"""
import json, sys
import torch.distributed as dist
import extshuffle
rank, world, store, n = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=world)
sampler = extshuffle.DistributedSampler(n, seed=5)
sampler.set_epoch(2)
print(json.dumps({"world": sampler.num_replicas, "rank": sampler.rank, "samples": list(sampler)}))
dist.barrier()
dist.destroy_process_group()
"""


def test_real_gloo_ranks_take_their_world_and_rank(tmp_path):
    n, world = 1001, 3
    store = tmp_path / "store"
    ranks = [subprocess.Popen([sys.executable, "-c", RANK_PROGRAM, str(r), str(world), str(store), str(n)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for r in range(world)]
    outputs = [rank.communicate(timeout=300) for rank in ranks]
    for rank, (out, err) in zip(ranks, outputs):
        assert rank.returncode == 0, err[-2000:]
    got = [json.loads(out) for out, _ in outputs]
    for r, result in enumerate(got):
        assert (result["world"], result["rank"]) == (world, r)
        explicit = extshuffle.DistributedSampler(n, num_replicas=world, rank=r, seed=5)
        explicit.set_epoch(2)
        assert result["samples"] == list(explicit)
    assert sorted(set(sum((result["samples"] for result in got), []))) == list(range(n))


def test_works_without_torch():
    program = (
        "import sys; sys.modules['torch'] = None\n"  # import torch now raises ImportError
        "import extshuffle\n"
        "s = extshuffle.DistributedSampler(10, num_replicas=2, rank=1, seed=3)\n"
        "assert type(s).__mro__[1] is object and len(list(s)) == 5\n"
        "try:\n"
        "    extshuffle.DistributedSampler(10)\n"
        "except RuntimeError as e:\n"
        "    print(e)\n")
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "Requires distributed package to be available"


def test_int64_slices_index_torch_tensors():
    n = 5000
    p = extshuffle.Permutation(n, 9, dtype=np.int64)
    rank_slice = p[3::8]
    assert rank_slice.dtype == np.int64
    data = torch.arange(n) * 10
    taken = data[torch.from_numpy(rank_slice)]
    assert taken.tolist() == [10 * int(i) for i in extshuffle.Permutation(n, 9)[3::8]]


# Lightning's sampler replacement (Lightning 2.x; Lightning is not in Debian,
# so the rule is restated here from its source):
# - lightning/pytorch/trainer/connectors/data_connector.py,
#   _requires_distributed_sampler: a DataLoader's sampler is replaced when
#   use_distributed_sampler (the Trainer's default) is on, the run is
#   distributed, `not isinstance(dataloader.sampler, DistributedSampler)`
#   and the dataset is not iterable;
# - _get_distributed_sampler there: the replacement is
#   DistributedSampler(dataloader.dataset, ...) for a RandomSampler or
#   SequentialSampler, else DistributedSamplerWrapper(dataloader.sampler,
#   ...) with the world's num_replicas and rank;
# - lightning/fabric/utilities/distributed.py, DistributedSamplerWrapper:
#   a DistributedSampler over a dataset made of the wrapped sampler's
#   indices (list(sampler), made again at each iteration), so each rank
#   takes every num_replicas-th of them;
# - lightning/pytorch/loops/utilities.py, _set_sampler_epoch: at each epoch,
#   set_epoch(epoch) on the loader's sampler and batch_sampler where they
#   have a callable set_epoch.


class _SamplerAsDataset(Dataset):
    def __init__(self, sampler):
        self.sampler = sampler
        self.indices = None

    def __len__(self):
        return len(self.sampler)

    def __getitem__(self, i):
        return self.indices[i]


class _WrapperOfLightning(TorchSampler):
    def __init__(self, sampler, **kwargs):
        super().__init__(_SamplerAsDataset(sampler), **kwargs)

    def __iter__(self):
        self.dataset.indices = list(self.dataset.sampler)
        return (self.dataset.indices[i] for i in super().__iter__())


def lightning_prepare(loader, world, rank):
    """The loader Lightning trains on in a distributed run of `world` ranks."""
    if isinstance(loader.sampler, TorchSampler):
        return loader
    if isinstance(loader.sampler, (RandomSampler, SequentialSampler)):
        sampler = TorchSampler(loader.dataset, num_replicas=world, rank=rank, shuffle=True)
    else:
        sampler = _WrapperOfLightning(loader.sampler, num_replicas=world, rank=rank, shuffle=True)
    return DataLoader(loader.dataset, batch_size=loader.batch_size, sampler=sampler)


def lightning_epoch(loader, epoch):
    for name in ("sampler", "batch_sampler"):
        sampler = getattr(loader, name, None)
        if sampler is not None and callable(getattr(sampler, "set_epoch", None)):
            sampler.set_epoch(epoch)
    return [int(i) for batch in loader for i in batch]


class _NotASubclass:
    """extshuffle's sampler as it was: the same iteration, not a torch sampler."""

    def __init__(self, sampler):
        self.sampler = sampler

    def __len__(self):
        return len(self.sampler)

    def __iter__(self):
        return iter(self.sampler)

    def set_epoch(self, epoch):
        self.sampler.set_epoch(epoch)


def test_lightning_leaves_it_alone_and_reshuffles_it():
    n, world = 1000, 4
    orders = []
    for epoch in range(2):
        seen = []
        for rank in range(world):
            sampler = extshuffle.DistributedSampler(Records(n), num_replicas=world, rank=rank, seed=7)
            prepared = lightning_prepare(DataLoader(Records(n), batch_size=16, sampler=sampler), world, rank)
            assert prepared.sampler is sampler
            seen.append(lightning_epoch(prepared, epoch))
        assert sorted(sum(seen, [])) == list(range(n))  # 1000 = 4 x 250: no padding
        orders.append(seen)
    assert orders[0] != orders[1]
    # The rule bites: the same sampler not subclassing torch's is wrapped,
    # and 4 ranks see about a quarter of the records.
    seen = set()
    for rank in range(world):
        sampler = _NotASubclass(extshuffle.DistributedSampler(Records(n), num_replicas=world, rank=rank, seed=7))
        prepared = lightning_prepare(DataLoader(Records(n), batch_size=16, sampler=sampler), world, rank)
        assert prepared.sampler is not sampler
        seen.update(lightning_epoch(prepared, 0))
    assert len(seen) <= n // world + world, len(seen)


def test_loops_that_check_isinstance_reshuffle_it():
    sampler = extshuffle.DistributedSampler(Records(100), num_replicas=1, rank=0, seed=1)
    orders = []
    for epoch in range(2):
        if isinstance(sampler, TorchSampler):  # what many training loops write
            sampler.set_epoch(epoch)
        orders.append(list(sampler))
    assert orders[0] != orders[1]


def test_real_data_loader_with_persistent_workers_resumes_at_another_world():
    # A plain DataLoader with 2 persistent workers runs ahead of the loop:
    # the state counts what the loop consumed (consumed=), relative to the
    # iterator's start, so a second preemption is as right as the first.
    n, batch = 3001, 16
    got = []
    state = None
    for world, stop in ((3, 7), (2, 5), (5, None)):
        for rank in range(world):
            sampler = extshuffle.DistributedSampler(Records(n), num_replicas=world, rank=rank, seed=11)
            if state is not None:
                sampler.load_state_dict(state)
            sampler.set_epoch(4)
            loader = DataLoader(Records(n), batch_size=batch, sampler=sampler, num_workers=2, persistent_workers=True)
            for step, taken in enumerate(loader):
                got += [int(i) for i in taken]
                if step + 1 == stop:
                    handed_out = sampler.state_dict()["position"]
                    rank_state = sampler.state_dict(consumed=(step + 1) * batch)
                    break
            if stop is not None:
                assert handed_out > rank_state["position"]  # the workers had fetched ahead
        if stop is not None:
            state = rank_state
    order = extshuffle.Permutation(n, extshuffle.epoch_seed(11, 4))
    padding = (5 - (n - state["position"]) % 5) % 5
    expected = sorted(order[:].tolist() + order[:padding].tolist())
    assert sorted(got) == expected
