"""The statistical tests of docs/quality.md on Permutation: the chi-square
of the orders of a few records and of the position matrix, over seeds and
over epochs (epoch_seed), on one-level and multi-level plans. Each test
fails with probability 1e-6 under a uniform permutation (its p-value
threshold)."""

import collections
import itertools

import numpy as np
import pytest
from scipy.stats import chi2

import extshuffle

P_THRESHOLD = 1e-6  # the false-failure rate of each test


def chi_square_p(observed, expected):
    observed = np.asarray(observed, dtype=float).ravel()
    expected = np.broadcast_to(np.asarray(expected, dtype=float), observed.shape)
    statistic = float(((observed - expected) ** 2 / expected).sum())
    return statistic, observed.size - 1


@pytest.mark.parametrize("knobs", [{}, {"leaf_records": 2, "fanout": 2}])
def test_orders_of_four_records_are_uniform(knobs):
    # 24 orders, 24000 permutations (seeds 0..23999): 1000 expected each.
    samples = 24000
    counts = collections.Counter(tuple(extshuffle.Permutation(4, s, **knobs)[:].tolist()) for s in range(samples))
    observed = [counts[order] for order in itertools.permutations(range(4))]
    assert sum(observed) == samples
    statistic, dof = chi_square_p(observed, samples / 24)
    assert chi2.sf(statistic, dof) > P_THRESHOLD, (statistic, observed)


@pytest.mark.parametrize("knobs", [{}, {"leaf_records": 3, "fanout": 2}])  # 1 and 3 levels
def test_position_matrix_is_uniform(knobs):
    # M[i, j]: permutations that put record j at position i; n = 8 on
    # 10000 seeds: 1250 expected each; chi-square with (n - 1)^2 dof.
    n, samples = 8, 10000
    matrix = np.zeros((n, n), dtype=np.int64)
    for s in range(samples):
        matrix[np.arange(n), extshuffle.Permutation(n, s, **knobs)[:].astype(np.int64)] += 1
    statistic = float(((matrix - samples / n) ** 2 / (samples / n)).sum())
    assert chi2.sf(statistic, (n - 1) ** 2) > P_THRESHOLD, matrix


def test_epochs_of_one_seed_are_uniform():
    # The orders of 4 records over 24000 consecutive epochs of seed 7.
    samples = 24000
    counts = collections.Counter(
        tuple(extshuffle.Permutation(4, extshuffle.epoch_seed(7, e))[:].tolist()) for e in range(samples))
    observed = [counts[order] for order in itertools.permutations(range(4))]
    statistic, dof = chi_square_p(observed, samples / 24)
    assert chi2.sf(statistic, dof) > P_THRESHOLD, observed
