"""DistributedSampler: torch's DistributedSampler semantics (padding by
wrapping around, rank r taking padded positions r, r + W, ...), a real
torch DataLoader with workers and three ranks simulated, epochs, and
resuming from state_dict (the harness of test_sampler_resume.py draws
thousands of resumes; these are the cases read by eye)."""

import collections

import numpy as np
import pytest

import extshuffle

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader  # noqa: E402
from torch.utils.data import DistributedSampler as TorchSampler  # noqa: E402
from records_dataset import Records  # noqa: E402

KNOBS = {"leaf_records": 50, "fanout": 4}  # a 3-level plan on a few thousand records


@pytest.mark.parametrize("n", [1, 2, 3, 10, 11, 1000, 1001])
@pytest.mark.parametrize("replicas", [1, 3, 8, 16])
@pytest.mark.parametrize("drop_last", [False, True])
def test_same_positions_as_torch(n, replicas, drop_last):
    # torch's sampler without shuffling gives the padded positions of each
    # rank; ours gives the records the epoch's order has there.
    if drop_last and n < replicas:
        return  # torch itself gives no samples then
    for rank in range(replicas):
        ours = extshuffle.DistributedSampler(n, replicas, rank, seed=9, drop_last=drop_last, **KNOBS)
        theirs = TorchSampler(Records(n), replicas, rank, shuffle=False, drop_last=drop_last)
        order = ours.permutation()
        assert len(ours) == len(theirs)
        assert list(ours) == [order[i] for i in theirs]
        unshuffled = extshuffle.DistributedSampler(n, replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(unshuffled) == list(theirs)


def loader(sampler, batch_size=16, workers=2, persistent=False):
    return DataLoader(Records(len(sampler.permutation())), batch_size=batch_size, sampler=sampler,
                      num_workers=workers, persistent_workers=persistent)


def test_data_loader_with_workers_three_ranks():
    # Each rank's sampler and loader (its workers persistent) serve both
    # epochs, set_epoch() before each, as a training loop does.
    n, ranks = 1000, 3  # 1000 = 3 * 333 + 1: torch pads with the order's first 2 records
    samplers = [extshuffle.DistributedSampler(n, ranks, rank, seed=123, **KNOBS) for rank in range(ranks)]
    loaders = [loader(sampler, persistent=True) for sampler in samplers]
    epochs = []
    for epoch in range(2):
        seen = collections.Counter()
        per_rank = []
        for sampler, rank_loader in zip(samplers, loaders):
            sampler.set_epoch(epoch)
            got = [int(i) for batch in rank_loader for i in batch]
            assert len(got) == len(sampler) == 334
            per_rank.append(got)
            seen.update(got)
        order = extshuffle.Permutation(n, extshuffle.epoch_seed(123, epoch), **KNOBS)
        padding = [order[0], order[1]]
        assert set(seen) == set(range(n))
        assert sorted(i for i, count in seen.items() if count == 2) == sorted(padding)
        assert all(count == 1 for i, count in seen.items() if i not in padding)
        epochs.append(per_rank)
    assert epochs[0] != epochs[1]  # each epoch its own order
    assert all(epochs[0][r] != epochs[1][r] for r in range(ranks))


def test_resume_from_state_dict_with_workers():
    n, batch_size = 1000, 16
    sampler = extshuffle.DistributedSampler(n, 3, 1, seed=5, **KNOBS)
    sampler.set_epoch(4)
    whole = list(sampler)  # the epoch a loader hands out, in the sampler's order
    consumed = []
    iterator = iter(loader(sampler, batch_size))
    for _ in range(5):
        consumed += [int(i) for i in next(iterator)]
    del iterator
    state = sampler.state_dict(consumed=len(consumed))
    assert state["epoch"] == 4 and state["position"] == 80 * 3  # every rank's 80 together
    resumed = extshuffle.DistributedSampler(n, 3, 1, seed=5, **KNOBS)
    resumed.load_state_dict(state)
    rest = [int(i) for batch in loader(resumed, batch_size) for i in batch]
    assert consumed + rest == whole
    # The next epoch starts from its beginning again.
    resumed.set_epoch(5)
    assert len(list(resumed)) == len(resumed)


def test_state_dict_counts_what_the_iterator_handed_out():
    sampler = extshuffle.DistributedSampler(100, 2, 0, seed=1)
    iterator = iter(sampler)
    first = [next(iterator) for _ in range(7)]
    state = sampler.state_dict()
    assert state["position"] == 14  # both ranks' 7
    other = extshuffle.DistributedSampler(100, 2, 0, seed=1)
    other.load_state_dict(state)
    assert first + list(other) == list(extshuffle.DistributedSampler(100, 2, 0, seed=1))
    with pytest.raises(ValueError):
        extshuffle.DistributedSampler(101, 2, 0, seed=1).load_state_dict(state)


def test_arguments_as_torch_checks_them(monkeypatch):
    with pytest.raises(ValueError):
        extshuffle.DistributedSampler(10, 2, 2)
    with pytest.raises(ValueError):
        extshuffle.DistributedSampler(10, 2, -1)
    with pytest.raises(RuntimeError):
        extshuffle.DistributedSampler(Records(10))  # torch.distributed not initialised, as torch raises
    import torch.distributed as dist
    monkeypatch.setattr(dist, "is_initialized", lambda: True)
    monkeypatch.setattr(dist, "get_world_size", lambda: 4)
    monkeypatch.setattr(dist, "get_rank", lambda: 3)
    sampler = extshuffle.DistributedSampler(Records(10))
    assert (sampler.num_replicas, sampler.rank, len(sampler)) == (4, 3, 3)


def test_a_rank_reads_in_blocks_of_the_large_order():
    # n past one block: the rank's samples come from strided blocks.
    n = 300007
    sampler = extshuffle.DistributedSampler(n, 8, 5, seed=3)
    got = np.fromiter(sampler, dtype=np.uint64)
    order = sampler.permutation()[:]
    padded = np.concatenate([order, order[:len(sampler) * 8 - n]])
    assert np.array_equal(got, padded[5::8])


def test_set_epoch_after_load_keeps_the_position_of_that_epoch_only():
    n = 1000
    whole = list(extshuffle.DistributedSampler(n, 4, 2, seed=8, **KNOBS).permutation(6)[:])
    first = extshuffle.DistributedSampler(n, 4, 2, seed=8, **KNOBS)
    first.set_epoch(6)
    iterator = iter(first)
    taken = [next(iterator) for _ in range(30)]
    state = first.state_dict()
    assert (state["epoch"], state["position"]) == (6, 120)
    # The usual resumed loop: load, then set_epoch of that same epoch.
    resumed = extshuffle.DistributedSampler(n, 4, 2, seed=8, **KNOBS)
    resumed.load_state_dict(state)
    resumed.set_epoch(6)
    assert taken + list(resumed) == whole[2::4]
    # Another epoch starts from its beginning.
    other = extshuffle.DistributedSampler(n, 4, 2, seed=8, **KNOBS)
    other.load_state_dict(state)
    other.set_epoch(7)
    assert len(list(other)) == 250
    # A loader that loads as its iterator starts (torchdata's) sees set_epoch first.
    late = extshuffle.DistributedSampler(n, 4, 2, seed=8, **KNOBS)
    late.set_epoch(6)
    late.load_state_dict(state)
    assert taken + list(late) == whole[2::4]
    late.set_epoch(7)
    late.load_state_dict(dict(state, position=n))  # epoch 6 was done; the loop has gone on to 7
    assert len(list(late)) == 250 and late.epoch == 7


def test_state_checks_everything_that_changes_the_order():
    state = extshuffle.DistributedSampler(100, 2, 0, seed=1, **KNOBS).state_dict()
    assert set(state) == {"epoch", "position", "permutation_version", "seed", "dataset_len", "shuffle",
                          "drop_last", "leaf_records", "fanout"}
    for changed in ({"seed": 2}, {"shuffle": False}, {"drop_last": True}, {"leaf_records": 51}, {"fanout": None}):
        arguments = dict(seed=1, shuffle=True, drop_last=False, **KNOBS)
        arguments.update(changed)
        with pytest.raises(ValueError, match=next(iter(changed))):
            extshuffle.DistributedSampler(100, 2, 0, **arguments).load_state_dict(state)
    with pytest.raises(ValueError, match="dataset_len"):
        extshuffle.DistributedSampler(101, 2, 0, seed=1, **KNOBS).load_state_dict(state)
    with pytest.raises(ValueError, match="permutation_version"):
        extshuffle.DistributedSampler(100, 2, 0, seed=1, **KNOBS).load_state_dict(dict(state, permutation_version=3))
    with pytest.raises(ValueError, match="before the global position"):
        extshuffle.DistributedSampler(100, 2, 0, seed=1).load_state_dict({"epoch": 0, "position": 3, "seed": 1})
    # Another world size and rank load it: the state is global.
    extshuffle.DistributedSampler(100, 7, 6, seed=1, **KNOBS).load_state_dict(state)
