"""The resume loops of docs/python.md ("Resuming"), run as the page shows
them: the code is read from the page. Each loop runs four jobs (3, 2, 4 and
1 ranks, the ranks one after another: they share nothing), preempted
mid-epoch by a train_step that raises; the records each epoch trained on
up to its last checkpoint are counted: every record once, the padding of
the job that finished the epoch once more."""

import pathlib
import re
import sys
import types

import numpy as np
import pytest

import extshuffle

torch = pytest.importorskip("torch")
from torch.utils.data import default_collate  # noqa: E402

from loader_emulation import StatefulLoader  # noqa: E402
from records_dataset import Records  # noqa: E402

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"


def doc_code(name):
    """The code block after <!-- tested: name --> in docs/python.md."""
    match = re.search(r"<!-- tested: " + name + r" -->\n```python\n(.*?)\n```", DOC.read_text(), re.S)
    assert match, f"no block '{name}' in {DOC}"
    return match.group(1)


class Preempted(Exception):
    pass


class EmulatedStatefulDataLoader:
    """torchdata.stateful_dataloader.StatefulDataLoader's interface over the
    emulation of its protocol (loader_emulation.StatefulLoader), batches
    collated as torch's."""

    def __init__(self, dataset, batch_size, sampler, num_workers=0):
        self.dataset = dataset
        self.loader = StatefulLoader(sampler, batch_size, num_workers)

    def __iter__(self):
        return (default_collate([self.dataset[i] for i in batch]) for batch in self.loader)

    def state_dict(self):
        return self.loader.state_dict()

    def load_state_dict(self, state):
        self.loader.load_state_dict(state)


@pytest.fixture
def torchdata_or_emulation(monkeypatch):
    try:
        import torchdata.stateful_dataloader  # noqa: F401
    except ImportError:
        module = types.ModuleType("torchdata.stateful_dataloader")
        module.StatefulDataLoader = EmulatedStatefulDataLoader
        package = types.ModuleType("torchdata")
        package.stateful_dataloader = module
        monkeypatch.setitem(sys.modules, "torchdata", package)
        monkeypatch.setitem(sys.modules, "torchdata.stateful_dataloader", module)


@pytest.mark.parametrize("loop", ["plain_loop", "stateful_loop"])
def test_documented_loops_resume_exactly(loop, monkeypatch, request):
    if loop == "stateful_loop":
        request.getfixturevalue("torchdata_or_emulation")
    code = doc_code(loop)
    # Each preempted job runs 110 steps of an epoch (10 past its checkpoint
    # at step 99, lost and done again): 3 ranks from 0 and 2 ranks from 9600
    # preempted in epoch 0, 4 ranks finishing it (1011 = 4 * 252 + 3 records:
    # one padded) and preempted in epoch 1, 1 rank finishing that.
    n, epochs = 17011, 2
    samplers = []  # the sampler each rank made, so that train_step knows the epoch

    class RecordedSampler(extshuffle.DistributedSampler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            samplers.append(self)
    monkeypatch.setattr(extshuffle, "DistributedSampler", RecordedSampler, raising=False)

    trained = [[] for _ in range(epochs)]  # records trained on, up to the last checkpoint
    checkpoint = None
    # (ranks, the train_step at which the job is preempted: None runs to the end)
    for world, preempt_at in ((3, 110), (2, 110), (4, 8 + 110), (1, None)):
        saved = []
        for rank in range(world):
            pending, steps = [], [0]

            def train_step(batch, pending=pending, steps=steps):
                if steps[0] == preempt_at:
                    raise Preempted
                steps[0] += 1
                pending.append((samplers[-1].epoch, batch.tolist()))

            def save_checkpoint(state, pending=pending, saved=saved, rank=rank):
                for epoch, batch in pending:
                    trained[epoch] += batch
                pending.clear()
                saved.append((rank, state))

            namespace = {"train_step": train_step, "save_checkpoint": save_checkpoint}
            exec(compile(code, f"docs/python.md ({loop})", "exec"), namespace)
            try:
                namespace["run_job"](Records(n), epochs, world, rank, checkpoint)
                assert preempt_at is None
            except Preempted:
                assert preempt_at is not None
            for epoch, batch in pending:  # a job that was not preempted keeps what it did
                if preempt_at is None:
                    trained[epoch] += batch
        if preempt_at is not None:
            last = [[state for r, state in saved if r == rank][-1] for rank in range(world)]
            assert all(state == last[0] for state in last), "ranks saved different states"
            checkpoint = last[0]
    for epoch in range(epochs):
        counts = np.bincount(trained[epoch], minlength=n)
        padding = int(counts.sum()) - n
        order = extshuffle.Permutation(n, extshuffle.epoch_seed(1234, epoch))
        assert counts.min() == 1 and 0 <= padding < 4, (epoch, padding)
        assert sorted(np.flatnonzero(counts == 2).tolist()) == sorted(order[:padding].tolist())
