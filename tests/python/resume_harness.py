"""The resume harness: training runs that are preempted and restarted at
other world sizes, batch sizes and worker counts, each epoch checked
exactly with a count per record.

A schedule is one training run: n records, a seed, shuffle and drop_last,
the plan's knobs, 1 to 3 epochs, and segments: each a job of `world` ranks
(1 to 64) with a batch size and a worker count, preempted after `steps`
steps, or after an epoch's loop has ended, or run to the end. Every rank has
its own sampler and loader (loader_emulation.py); the ranks take one batch
each per step, as synchronous data-parallel training does. A preempted job
checkpoints as its protocol's loop does (docs/python.md, "Resuming"):
"consumed" (a plain DataLoader: sampler.state_dict(consumed=...)) or
"stateful" (torchdata's StatefulDataLoader: loader.state_dict()); every
rank's state must be the same (it is global), and the next job loads rank
0's into each of its ranks.

The check is exact, so the harness has no false failures (the schedules are
drawn at random from a seed; nothing asserted is random). For epoch e, each
job that read it consumed the global positions [G0, G0 + W k): G0 where it
resumed (the harness's own count, which the state must match), W its world,
k the samples each rank took. The records the epoch consumed must be,
as a multiset, order[g mod n] for those g: the jobs' ranges tile [0, n)
(every record once), the padding (positions n and beyond, wrapped to the
order's start, fewer than W) only in the job that ended the epoch; with
drop_last, the order's last (n - G0) mod W records never. The order is
Permutation(n, epoch_seed(seed, e)), which test_permutation.py checks
against the CLI.

usage: PYTHONPATH=build/python /usr/bin/python3 tests/python/resume_harness.py [--schedules N] [--seed S]
"""

import argparse
import array
import dataclasses
import random
import sys
from typing import Optional

import numpy as np

import extshuffle
from loader_emulation import PlainLoader, StatefulLoader

KNOB_CHOICES = ({}, {"leaf_records": 7, "fanout": 3}, {"leaf_records": 64, "fanout": 8})
WORLDS = (1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 32, 63, 64)


@dataclasses.dataclass
class Segment:
    world: int
    batch: int
    workers: int
    steps: Optional[int] = None  # preempted after this many steps; None: no step limit
    stop_after_epoch: bool = False  # preempted once an epoch's loop has ended
    saved_epoch_next: bool = False  # that checkpoint records the next epoch, as some loops do


@dataclasses.dataclass
class Schedule:
    n: int
    seed: int
    shuffle: bool
    drop_last: bool
    epochs: int
    protocol: str
    segments: list
    knobs: dict = dataclasses.field(default_factory=dict)


def rank_count(n, start, world, drop_last):
    """Each rank's samples of an iteration from global position `start` (the rule)."""
    left = max(0, n - start)
    return left // world if drop_last else -(-left // world)


def draw_schedule(rng, n=None, batches=None):
    """A random schedule; n and the batch sizes to draw from may be given."""
    if n is None:
        n = rng.choice((rng.randint(1, 40), rng.randint(40, 400), rng.randint(400, 3000)))
    protocol = rng.choice(("consumed", "stateful"))
    workers = rng.randint(0, 4)
    segments = []
    for _ in range(rng.randint(1, 5)):
        world = rng.choice(WORLDS) if rng.random() < 0.7 else rng.randint(1, 64)
        batch = rng.choice(batches) if batches else rng.randint(1, 64)
        steps_per_epoch = max(1, -(-(-(-n // world)) // batch))
        segment = Segment(world, batch, workers if protocol == "stateful" else rng.randint(0, 4))
        if rng.random() < 0.15:
            segment.stop_after_epoch = True
            # torchdata restarts a loader whose state was taken after its
            # iterator ended from the start: such a checkpoint must record
            # the next epoch (docs/python.md); a plain loop may record either.
            segment.saved_epoch_next = protocol == "stateful" or rng.random() < 0.5
        else:
            segment.steps = rng.randint(1, 2 * steps_per_epoch)
        segments.append(segment)
    segments[-1].steps, segments[-1].stop_after_epoch = None, False
    return Schedule(n=n, seed=rng.randrange(1 << 64), shuffle=rng.random() < 0.85, drop_last=rng.random() < 0.3,
                    epochs=rng.randint(1, 3), protocol=protocol, segments=segments,
                    knobs=rng.choice(KNOB_CHOICES) if n < 5000 else {})


class Run:
    """One schedule played out: what each epoch consumed and from where."""

    def __init__(self, schedule):
        self.s = schedule
        self.records = [array.array("q") for _ in range(schedule.epochs)]  # per epoch: the records consumed
        self.ranges = [[] for _ in range(schedule.epochs)]  # per epoch: (G0, world, samples per rank)
        self.resume = None  # (epoch, global position): where the harness counts the next job begins

    def play(self):
        state = None
        for segment in self.s.segments:
            state = self.job(segment, state)
            if state is None:
                break
        assert state is None, f"the run ended with a checkpoint pending: {self.s}"
        for epoch in range(self.s.epochs):
            self.check_epoch(epoch)

    def job(self, segment, state):
        """One job: its ranks from `state` until preempted (its checkpoint returned) or done (None)."""
        s, world = self.s, segment.world
        samplers = [extshuffle.DistributedSampler(s.n, world, r, shuffle=s.shuffle, seed=s.seed,
                                                  drop_last=s.drop_last, **s.knobs) for r in range(world)]
        loader_class = PlainLoader if s.protocol == "consumed" else StatefulLoader
        loaders = [loader_class(sampler, segment.batch, segment.workers) for sampler in samplers]
        start_epoch = 0
        if state is not None:
            start_epoch = state["epoch"]
            for sampler, loader in zip(samplers, loaders):
                if s.protocol == "consumed":
                    sampler.load_state_dict(state["sampler"])  # before set_epoch, as the loop does
                else:
                    loader.load_state_dict(state["loader"])  # applied by iter(loader), after set_epoch
        steps_left = segment.steps
        for epoch in range(start_epoch, s.epochs):
            start = 0
            if self.resume is not None and self.resume[0] == epoch:
                start = self.resume[1]
            self.resume = None
            count = rank_count(s.n, start, world, s.drop_last)
            for sampler in samplers:
                sampler.set_epoch(epoch)
            iterators = [iter(loader) for loader in loaders]
            taken = steps = 0
            while True:
                batches = [next(iterator, None) for iterator in iterators]
                if batches[0] is None:
                    assert all(b is None for b in batches), "ranks ended their epoch at different steps"
                    break
                assert len({len(b) for b in batches}) == 1, "ranks took batches of different sizes"
                for batch in batches:
                    self.records[epoch].extend(batch)
                taken += len(batches[0])
                steps += 1
                if steps_left is not None:
                    steps_left -= 1
                    if steps_left == 0:
                        self.ranges[epoch].append((start, world, taken))
                        return self.checkpoint(samplers, loaders, epoch, start, count, taken, steps * segment.batch)
            assert taken == count, f"epoch {epoch}: each rank took {taken} samples, the rule gives {count}"
            self.ranges[epoch].append((start, world, taken))
            if segment.stop_after_epoch:
                saved = epoch + 1 if segment.saved_epoch_next else epoch
                if saved >= s.epochs:
                    return None
                state = self.checkpoint(samplers, loaders, epoch, start, count, taken, steps * segment.batch)
                state["epoch"] = saved
                return state
        return None

    def checkpoint(self, samplers, loaders, epoch, start, count, taken, consumed):
        """Every rank's state (all the same), and where the harness expects the next job to begin."""
        position = self.s.n if taken >= count else start + len(samplers) * taken
        if self.s.protocol == "consumed":
            states = [sampler.state_dict(consumed=consumed) for sampler in samplers]
            sampler_states = states
        else:
            states = [loader.state_dict() for loader in loaders]
            sampler_states = [st["batches"]["sampler_state"] for st in states]
        assert all(st == sampler_states[0] for st in sampler_states), "ranks disagree on the global state"
        assert (sampler_states[0]["epoch"], sampler_states[0]["position"]) == (epoch, position), \
            f"state {sampler_states[0]} where the rule gives epoch {epoch} position {position}"
        self.resume = (epoch, position)
        key = "sampler" if self.s.protocol == "consumed" else "loader"
        return {"epoch": epoch, key: states[0]}

    def check_epoch(self, epoch):
        s, n = self.s, self.s.n
        where = f"epoch {epoch} of {s}"
        position = 0
        expected = np.zeros(n, dtype=np.int64)  # per position of the order: how often the jobs consumed it
        finishing_world = None  # the world of the job whose iteration finished the epoch
        for start, world, taken in self.ranges[epoch]:
            assert start == position, f"a job began at {start}, the last one ended at {position}: {where}"
            count_positions(expected, start, start + world * taken)
            position = n if taken == rank_count(n, start, world, s.drop_last) else start + world * taken
            if position == n and finishing_world is None:
                finishing_world = world
        assert position == n, f"epoch not finished ({position} of {n}): {where}"
        records = np.frombuffer(self.records[epoch], dtype=np.int64)
        assert records.size == 0 or (records.min() >= 0 and records.max() < n), f"a record out of range: {where}"
        # The records consumed, as a multiset, must be order[g mod n] for the
        # consumed global positions g: compared position by position, each
        # record mapped to its position by the order's inverse (a bijection,
        # checked). The same check as counting by record, without counting the
        # expected records at random places of n counters (at n = 2^24 that
        # took two thirds of the harness's CPU time).
        order = None
        if s.shuffle:
            order = extshuffle.Permutation(n, extshuffle.epoch_seed(s.seed, epoch), dtype=np.int64, **s.knobs)[:]
            position_of = np.full(n, -1, dtype=np.int64)
            position_of[order] = np.arange(n, dtype=np.int64)
            assert position_of.min(initial=0) >= 0, f"the order is not a permutation: {where}"
            records = position_of[records]
        got = np.bincount(records, minlength=n)
        if not np.array_equal(got, expected):
            first = int(np.flatnonzero(got != expected)[0])
            record = first if order is None else int(order[first])
            raise AssertionError(f"record {record} consumed {got[first]} times, the rule gives {expected[first]}: "
                                 f"{where}")
        # Every record once, but fewer than the finishing job's world padded or dropped.
        if s.drop_last:
            assert got.max(initial=0) <= 1 and n - got.sum() < finishing_world, where
        else:
            assert got.min(initial=1) >= 1 and got.sum() - n < finishing_world, where


def count_positions(counts, start, end):
    """Adds 1 to counts[g mod n] for each global position g in [start, end) (n = len(counts))."""
    n = len(counts)
    while start < end:
        first = start % n
        stop = min(n, first + end - start)
        counts[first:stop] += 1
        start += stop - first


def run_schedules(count, seed, n=None, batches=None):
    """Plays `count` schedules drawn from `seed`; returns how many positions they consumed."""
    rng = random.Random(seed)
    total = 0
    for _ in range(count):
        schedule = draw_schedule(rng, n, batches)
        run = Run(schedule)
        run.play()
        total += sum(len(records) for records in run.records)
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schedules", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"{run_schedules(args.schedules, args.seed)} samples consumed, every epoch exact")


if __name__ == "__main__":
    sys.exit(main())
