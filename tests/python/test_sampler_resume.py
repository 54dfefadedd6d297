"""Exactly-once resume at any world size: the harness (resume_harness.py)
plays random training runs (1 to 64 ranks, 0 to 4 workers, batch sizes,
preemptions mid-epoch and at an epoch's end, both loops of docs/python.md)
and checks every epoch exactly against the documented rule. What it
asserts has no randomness: no false failures."""

import random

import pytest

from resume_harness import Run, draw_schedule, run_schedules


@pytest.mark.parametrize("part", range(8))
def test_thousands_of_schedules_at_small_n(part):
    # 8 x 150 schedules, n from 1 to 3000, a third on multi-level plans (knobs).
    # They draw every combination of loop, shuffle, drop_last, knobs and range
    # of n (each at least twice), of epochs and segments, of preemption at an
    # epoch's end and the epoch it saves, every world size 1 to 64, and each
    # of WORLDS with either loop and either drop_last: 8 x 300 covered no
    # class more, in twice the time.
    assert run_schedules(150, seed=1000 + part) > 0


# n = 2^k + 1 for even k from 16 to 24 (where grain's index shuffle repeats
# one record and loses another every epoch) and n = 2^24, with the shipped
# plan; fewer schedules, batches of thousands.
@pytest.mark.parametrize("n", [2**16 + 1, 2**18 + 1, 2**20 + 1, 2**22 + 1, 2**24 + 1, 2**24])
def test_large_n(n):
    rng = random.Random(n)
    schedules = 3 if n <= 2**20 + 1 else 1
    for _ in range(schedules):
        schedule = draw_schedule(rng, n=n, batches=(1024, 4096, 65536))
        schedule.epochs = min(schedule.epochs, 2 if n <= 2**20 + 1 else 1)
        Run(schedule).play()
