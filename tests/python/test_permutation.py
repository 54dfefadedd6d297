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


def test_slices_with_huge_steps():
    n = 1000
    p = extshuffle.Permutation(n, 3, leaf_records=64, fanout=4)
    whole = p[:]
    for key in (slice(None, None, 10**30), slice(None, None, -10**30), slice(7, None, 2**64), slice(-3, None, 2**70),
                slice(None, 5, -(2**65)), slice(n - 1, 0, 10**30), slice(0, n, n - 1), slice(n - 1, None, -(n - 1))):
        assert np.array_equal(p[key], whole[key]), key
    big = extshuffle.Permutation(2**52, 1)
    assert big[::10**30].tolist() == [big[0]]
    assert big[::-(10**30)].tolist() == [big[-1]]


def test_index_arrays_and_int64():
    n = 5000
    p = extshuffle.Permutation(n, 21, leaf_records=100, fanout=8)
    whole = p[:]
    rng = np.random.default_rng(2)
    for index in (rng.integers(0, n, 300), rng.integers(-n, n, (7, 11)), np.array([], dtype=np.int64),
                  np.array([n - 1, 0, 0, n - 1], dtype=np.uint32), [4, -1, 17], np.arange(n)[::-1]):
        assert np.array_equal(p[index], whole[np.asarray(index, dtype=np.int64)]), index
    mask = rng.random(n) < 0.3
    assert np.array_equal(p[mask], whole[mask])
    for bad in (np.array([n]), np.array([-n - 1]), [0.5], mask[:-1]):
        with pytest.raises(IndexError):
            p[bad]
    signed = extshuffle.Permutation(n, 21, leaf_records=100, fanout=8, dtype=np.int64)
    for key in (slice(None), slice(3, None, 8), np.array([5, 1])):
        got = signed[key]
        assert got.dtype == np.int64 and np.array_equal(got, whole[key].astype(np.int64))
    assert np.concatenate(list(signed.blocks(999))).dtype == np.int64
    assert pickle.loads(pickle.dumps(signed))[:5].dtype == np.int64
    with pytest.raises(ValueError):
        extshuffle.Permutation(10, 1, dtype=np.float32)


def test_threads_do_not_change_the_order(cli_order):
    n = (1 << 20) + 77777  # two levels of the shipped plan: a leaf compacted by its holes
    expected = cli_order(n, 13)
    for threads in (1, 2, 5):
        p = extshuffle.Permutation(n, 13, threads=threads)
        assert np.array_equal(p[:], expected), threads
        assert np.array_equal(p[5::3], expected[5::3]), threads


INTERRUPTED_CALL = r"""
import sys, time
import extshuffle
from extshuffle import _native

def probe():  # the call's first signal check: it is under way
    if not probe.fired:
        probe.fired = True
        print("busy", flush=True)
probe.fired = False
_native._set_interrupt_probe(probe)
p = extshuffle.Permutation(2**52, 1)
try:
    p[2**51:2**51 + 2**20]  # the middle bucket of a root of 2^32 chunks: hours of draws
except KeyboardInterrupt:
    print("interrupted", time.monotonic(), flush=True)
else:
    print("completed", flush=True)
"""


def test_ctrl_c_interrupts_a_long_call():
    import os
    import signal
    import subprocess
    import sys
    import time
    child = subprocess.Popen([sys.executable, "-c", INTERRUPTED_CALL], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "busy\n"  # the event: the native call has asked for signals once
        sent = time.monotonic()
        os.kill(child.pid, signal.SIGINT)
        out, _ = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0 and out.startswith("interrupted"), out
    print(f"KeyboardInterrupt {float(out.split()[1]) - sent:.3f} s after SIGINT")


def test_an_exception_from_a_signal_check_abandons_the_call():
    from extshuffle import _native

    def probe():
        raise ValueError("from the check")
    _native._set_interrupt_probe(probe)
    try:
        with pytest.raises(ValueError, match="from the check"):
            extshuffle.Permutation(2**52, 1)[2**51:2**51 + 2**20]
    finally:
        _native._set_interrupt_probe(None)
    p = extshuffle.Permutation(5000, 2, leaf_records=100, fanout=8)
    assert sorted(p[:].tolist()) == list(range(5000))
