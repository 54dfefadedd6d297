"""Two data loaders as a sampler sees them, without worker processes, for
the resume harness (thousands of schedules; test_sampler_torch.py runs the
real torch DataLoader with workers where a few cases suffice).

PlainLoader: torch.utils.data.DataLoader of torch 1.13. Its BatchSampler
takes batch_size indices from the sampler's iterator for each batch (the
last one shorter). Without workers a batch is taken when the loop asks for
it; with workers, iter(loader) dispatches prefetch_factor * num_workers
batches at once (_MultiProcessingDataLoaderIter._reset, _try_put_index),
and each batch handed to the loop dispatches one more first
(_process_data), batches coming back in order. So the sampler has handed
out up to 2 * num_workers batches more than the loop has taken.

StatefulLoader: torchdata's StatefulDataLoader (torchdata is not in Debian;
this follows its documented behaviour: "if the sampler ... include[s]
state_dict / load_state_dict methods, then it will call them during its
own state_dict / load_state_dict calls", and its source,
torchdata/stateful_dataloader/stateful_dataloader.py and sampler.py):
- its BatchSampler's iterator makes iter(sampler) when it is made; its
  state is {"samples_yielded", "sampler_state": sampler.state_dict()};
- without workers, loader.state_dict() asks that state then; with workers,
  the main process takes it as it dispatches each batch (right after the
  batch's indices were drawn) and loader.state_dict() gives the one taken
  for the last batch the loop received (or, before any, the one taken as
  the iterator was made, before its prefetching);
- loader.load_state_dict() keeps the state for the next iter(loader),
  which makes its iterator (one iter(sampler)), then restores it:
  sampler.load_state_dict(sampler_state) and iter(sampler) again;
- an iterator whose state was taken after it ended is restored and then
  replaced by a fresh one (StatefulDataLoader.__iter__, _finished);
- state_dict() before any iter() makes the iterator the next iter() takes;
- the worker count must be the one the state was taken with (it asserts
  so on restore).
"""

import collections
import itertools


def _batches(sampler_iter, batch_size):
    """BatchSampler(drop_last=False): lists of batch_size indices, the last shorter."""
    while True:
        batch = list(itertools.islice(sampler_iter, batch_size))
        if not batch:
            return
        yield batch


class PlainLoader:
    def __init__(self, sampler, batch_size, num_workers=0, prefetch_factor=2):
        self.sampler, self.batch_size = sampler, batch_size
        self.depth = num_workers * prefetch_factor  # batches dispatched ahead

    def __iter__(self):
        batches = _batches(iter(self.sampler), self.batch_size)
        if self.depth == 0:
            return batches
        return self._prefetched(batches)

    def _prefetched(self, batches):
        ahead = collections.deque(itertools.islice(batches, self.depth))
        while ahead:
            batch = ahead.popleft()
            ahead.extend(itertools.islice(batches, 1))  # the next one is dispatched before this is handed over
            yield batch


class _BatchSamplerIterator:
    """torchdata's _BatchSamplerIterator: batches and their state."""

    def __init__(self, sampler, batch_size):
        self.sampler, self.batch_size = sampler, batch_size
        self.sampler_iter = iter(sampler)
        self.samples_yielded = 0

    def __next__(self):
        batch = list(itertools.islice(self.sampler_iter, self.batch_size))
        self.samples_yielded += len(batch)
        if not batch:
            raise StopIteration
        return batch

    def state_dict(self):
        return {"samples_yielded": self.samples_yielded, "sampler_state": self.sampler.state_dict()}

    def load_state_dict(self, state):
        self.samples_yielded = state["samples_yielded"]
        self.sampler.load_state_dict(state["sampler_state"])
        self.sampler_iter = iter(self.sampler)


class _StatefulIterator:
    def __init__(self, loader, state):
        self.workers = loader.num_workers
        self.batches = _BatchSamplerIterator(loader.sampler, loader.batch_size)
        self.snapshot = self.batches.state_dict()
        self.finished = False
        if state is not None:
            assert state["num_workers"] == self.workers, "torchdata refuses another worker count"
            self.batches.load_state_dict(state["batches"])
            self.snapshot = state["batches"]
            self.finished = state["finished"]
        self.ahead = collections.deque()
        for _ in range(self.workers * loader.prefetch_factor):
            self._dispatch()

    def _dispatch(self):
        batch = next(self.batches, None)
        if batch is not None:
            self.ahead.append((batch, self.batches.state_dict()))

    def __iter__(self):
        return self

    def __next__(self):
        if self.workers == 0:
            batch = next(self.batches, None)
        elif self.ahead:
            batch, snapshot = self.ahead.popleft()
            self._dispatch()
            self.snapshot = snapshot
        else:
            batch = None
        if batch is None:
            self.finished = True
            raise StopIteration
        return batch

    def state_dict(self):
        batches = self.batches.state_dict() if self.workers == 0 else self.snapshot
        return {"num_workers": self.workers, "batches": batches, "finished": self.finished}


class StatefulLoader:
    def __init__(self, sampler, batch_size, num_workers=0, prefetch_factor=2):
        self.sampler, self.batch_size = sampler, batch_size
        self.num_workers, self.prefetch_factor = num_workers, prefetch_factor
        self.next_state = None
        self.iterator = None
        self.made_for_state = False  # an iterator made by state_dict(), taken by the next iter()

    def __iter__(self):
        if self.made_for_state:
            iterator, self.made_for_state = self.iterator, False
        else:
            iterator = _StatefulIterator(self, self.next_state)
            self.next_state = None
        if iterator.finished:
            iterator = _StatefulIterator(self, None)
        self.iterator = iterator
        return iterator

    def state_dict(self):
        if self.iterator is None:
            self.iterator = _StatefulIterator(self, self.next_state)
            self.next_state = None
            self.made_for_state = True
        return self.iterator.state_dict()

    def load_state_dict(self, state):
        self.iterator = None
        self.made_for_state = False
        self.next_state = state
