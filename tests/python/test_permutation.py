"""Permutation against the extshuffle program (the order `-i 0-(n-1)`
writes) at 1, 2 and 3 plan levels, its Python conventions, and its inverse."""

import pickle

import numpy as np
import pytest

import extshuffle


@pytest.mark.parametrize("n,leaf_records,fanout,levels", [
    (1, None, None, 1), (2, None, None, 1), (1000, None, None, 1),
    (1000, 100, 4, 2), (997, 30, 40, 2),        # 2 levels: small knobs, uneven buckets, short last chunk
    (1000, 16, 4, 3), (5000, 17, 5, 4), (3001, 8, 3, 5),  # 3 and more levels
])
def test_equals_the_program_at_every_level_count(cli_order, n, leaf_records, fanout, levels):
    for seed in (0, 42, 2**64 - 1):
        p = extshuffle.Permutation(n, seed, leaf_records=leaf_records, fanout=fanout)
        expected = cli_order(n, seed, leaf_records=leaf_records, fanout=fanout)
        assert np.array_equal(p[:], expected)
        assert list(p) == expected.tolist()
        stride = 1 if n <= 1000 else 7  # the inverse costs a matrix row per level
        assert [p.position(int(r)) for r in expected[::stride]] == list(range(0, n, stride))


def test_equals_the_program_at_two_real_levels(cli_order):
    # The shipped constants (L = 2^20): full chunks and a short last one.
    n = (1 << 20) + 123457
    p = extshuffle.Permutation(n, 7)
    expected = cli_order(n, 7)
    assert np.array_equal(p[:], expected)
    for i in (0, 1, n // 2, n - 1):
        assert p.position(int(expected[i])) == i


def test_equals_the_program_on_a_real_three_level_prefix(cli_order):
    # N > L F = 2^30: three levels of the shipped plan; the program's -n K
    # gives the first K; further positions are checked by the inverse.
    n = (1 << 31) + 5
    p = extshuffle.Permutation(n, 11)
    assert np.array_equal(p[:2000], cli_order(n, 11, head=2000))
    block = p[n // 3:n // 3 + 50]
    assert [p.position(int(r)) for r in block] == list(range(n // 3, n // 3 + 50))
    assert len(set(block.tolist())) == 50 and int(block.max()) < n


def test_python_conventions():
    n = 1000
    p = extshuffle.Permutation(n, 3, leaf_records=64, fanout=4)
    whole = p[:]
    assert len(p) == n and whole.dtype == np.uint64
    assert sorted(whole.tolist()) == list(range(n))
    assert isinstance(p[5], int) and p[5] == whole[5]
    assert p[-1] == whole[-1] and p[-n] == whole[0]
    for key in (slice(10, 20), slice(3, 900, 7), slice(None, None, 3), slice(-50, None), slice(900, 10, -3),
                slice(None, None, -1), slice(5, 5), slice(2000, 3000)):
        assert np.array_equal(p[key], whole[key]), key
    with pytest.raises(IndexError):
        p[n]
    with pytest.raises(IndexError):
        p[-n - 1]
    with pytest.raises(IndexError):
        p.position(n)
    assert p.position(-1) == p.position(n - 1)
    assert np.array_equal(np.concatenate(list(p.blocks(300))), whole)
    q = pickle.loads(pickle.dumps(p))
    assert np.array_equal(q[:], whole)
    assert list(extshuffle.Permutation(0, 1)) == []
    with pytest.raises(ValueError):
        extshuffle.Permutation(10, 1, fanout=1)
    with pytest.raises(ValueError):
        extshuffle.Permutation(10, -1)


def test_epoch_seed_is_a_full_mix():
    seeds = {extshuffle.epoch_seed(5, e) for e in range(10000)}
    assert len(seeds) == 10000
    assert extshuffle.epoch_seed(5, 0) != 5
    # One input bit flipped, of the seed or of the epoch, changes each output
    # bit with probability 1/2: 128 flip counts ~ Binomial(64, 1/2), each
    # within [12, 52] and their mean within 32 +- 2.5 (5.6 standard
    # deviations): a false failure about once in 10^4 bases.
    flips = [bin(extshuffle.epoch_seed(5, 0) ^ extshuffle.epoch_seed(5, 1 << k)).count("1") for k in range(64)]
    flips += [bin(extshuffle.epoch_seed(5, 0) ^ extshuffle.epoch_seed(5 ^ (1 << k), 0)).count("1") for k in range(64)]
    assert 12 <= min(flips) and max(flips) <= 52, flips
    assert abs(np.mean(flips) - 32) < 2.5, flips
    assert extshuffle.epoch_seed(2**64 - 1, 2**64 - 1) < 2**64
