"""`extshuffle -i LO-HI -o order.npy`: the order as a uint64 .npy, read back
by numpy, equal to Permutation's."""

import subprocess

import numpy as np

import extshuffle


def test_order_npy_equals_the_permutation(binary, tmp_path):
    path = tmp_path / "order.npy"
    for n, low, head, seed in [(1000, 0, None, 5), (1000, 10, None, 6), ((1 << 20) + 9, 0, None, 7),
                               ((1 << 31) + 5, 0, 1000, 8), (1000, 3, 7, 9), (1, 0, None, 1)]:
        command = [binary, "-i", f"{low}-{low + n - 1}", "-o", str(path), "--seed", str(seed)]
        if head is not None:
            command += ["-n", str(head)]
        subprocess.run(command, check=True)
        order = np.load(path)
        expected = extshuffle.Permutation(n, seed)[:head] + np.uint64(low)
        assert order.dtype == np.dtype("<u8") and order.shape == expected.shape
        assert np.array_equal(order, expected)


def test_empty_range_and_refusals(binary, tmp_path):
    path = tmp_path / "order.npy"
    subprocess.run([binary, "-i", "5-4", "-o", str(path), "--seed", "1"], check=True)
    assert np.load(path).shape == (0,)
    path.unlink()
    for refused in (["-e", "a", "b"], ["-i", "0-9", "-z"]):
        run = subprocess.run([binary, *refused, "-o", str(path), "--seed", "1"], capture_output=True, text=True)
        assert run.returncode == 2 and ".npy" in run.stderr
        assert not path.exists()
