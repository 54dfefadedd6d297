#!/usr/bin/env python3
"""WebDataset tar shards for bench/suite.sh (case tar_wds), and their digest.

generate_tar.py OUT.tar BYTES SEED
    writes a tar archive (ustar, Python's tarfile) of about BYTES bytes:
    samples of 100 KB to 1 MB (uniform), each a .jpg of most of it, a .json
    and a .cls member, keys numbered in order. The bytes come from a 64 MiB
    pool of random bytes, at a random offset per member (a shuffle does not
    look at them).
generate_tar.py --digest FILE.tar
    prints an order-independent digest of the archive's samples (the
    consecutive regular members that share webdataset's key, each sample's
    raw bytes, headers included): the sha256 of their sorted sha256s, and
    their count. Equal for a shuffle's output and its input.
"""
import hashlib
import io
import mmap
import os
import random
import re
import sys
import tarfile


def generate(path, total, seed):
    rng = random.Random(seed)
    pool = rng.randbytes(64 << 20)
    written = 0
    with tarfile.open(path, 'w', format=tarfile.USTAR_FORMAT) as tar:
        k = 0
        while written < total:
            size = rng.randint(100_000, 1_000_000)
            label = str(rng.randrange(1000)).encode()
            meta = b'{"key": "%08d", "width": %d}' % (k, rng.randint(64, 4096))
            image = size - len(label) - len(meta)
            at = rng.randrange(len(pool) - image)
            for ext, data in (('jpg', pool[at:at + image]), ('json', meta), ('cls', label)):
                info = tarfile.TarInfo('%08d.%s' % (k, ext))
                info.size = len(data)
                info.mtime = 1700000000
                tar.addfile(info, io.BytesIO(data))
                written += 512 + (len(data) + 511) // 512 * 512
            k += 1


def digest(path):
    file = open(path, 'rb')
    raw = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) if os.path.getsize(path) else b''
    samples, key, parts = [], None, []
    with tarfile.open(path) as tar:
        for m in tar:
            if not m.isreg():
                continue
            match = re.match(r'^((?:.*/|)[^.]+)[.]([^/]*)$', m.name)
            k = match.group(1) if match else m.name
            end = m.offset_data + (m.size + 511) // 512 * 512
            if k != key and parts:
                samples.append(hashlib.sha256(b''.join(parts)).hexdigest())
                parts = []
            key = k
            parts.append(raw[m.offset:end])
    if parts:
        samples.append(hashlib.sha256(b''.join(parts)).hexdigest())
    samples.sort()
    return '%s samples=%d' % (hashlib.sha256(''.join(samples).encode()).hexdigest(), len(samples))


if __name__ == '__main__':
    if sys.argv[1] == '--digest':
        print(digest(sys.argv[2]))
    else:
        generate(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
