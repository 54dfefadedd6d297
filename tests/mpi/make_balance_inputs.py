"""Writes the inputs of the extshuffle-mpi spread-root tests into a directory,
with the real writers of each format: Python's csv and json modules,
numpy's .npy, tarfile.

usage: make_balance_inputs.py DIRECTORY
"""
import csv
import gzip
import io
import json
import os
import random
import sys
import tarfile

import numpy as np

out = sys.argv[1]
rng = random.Random(20261126)


def path(name):
    return os.path.join(out, name)


# The balance inputs (default L = 2^20: each root is one leaf). 200k JSONL
# records of 30 to ~250 bytes (lengths uniform: the balance test's bound
# uses their range), and 100k .npy rows of 24 bytes.
with open(path("balance.jsonl"), "w") as f:
    for i in range(200000):
        f.write(json.dumps({"id": i, "text": "x" * rng.randrange(0, 200)}) + "\n")
np.save(path("balance.npy"), np.arange(100000 * 6, dtype=np.float32).reshape(100000, 6))

# The identity inputs (run with L = 4096: a leaf root of a few thousand
# records). JSONL with heavy-tailed lengths (Pareto, up to ~60 KB).
with open(path("heavy.jsonl"), "w") as f:
    for i in range(3000):
        f.write(json.dumps({"id": i, "text": "y" * min(60000, int(20 * rng.paretovariate(1.2)))}) + "\n")
# CSV through the csv module: quoted fields holding newlines, commas and
# doubled quotes, a header, and a last record without its newline.
choices = ["plain", "with, comma", 'said "hi"', "two\nlines", "three\n\nlines, \"q\"", ""]
with open(path("quoted.csv"), "w", newline="") as f:
    writer = csv.writer(f, lineterminator="\n")
    writer.writerow(["id", "text"])
    for i in range(3000):
        writer.writerow([i, rng.choice(choices)])
    f.write('3000,"last\nline"')
np.save(path("rows.npy"), np.arange(4000 * 3, dtype=np.int64).reshape(4000, 3))
np.frombuffer(rng.randbytes(12 * 4001), dtype=np.uint8).tofile(path("records12.bin"))

# The few-chunk roots (run with L = 16384: two levels, every bucket a leaf).
# JSONL as balance.jsonl, of 2 chunks (the last short by 300 records) and of
# 9 (the last short by 5000); 16-byte records of 2 chunks and of 9 (short by 1000).
for name, records in (("chunks2.jsonl", 2 * 16384 - 300), ("chunks9.jsonl", 9 * 16384 - 5000)):
    with open(path(name), "w") as f:
        for i in range(records):
            f.write(json.dumps({"id": i, "text": "z" * rng.randrange(0, 200)}) + "\n")
for name, records in (("chunks2.bin", 2 * 16384 - 300), ("chunks9.bin", 9 * 16384 - 1000)):
    np.frombuffer(rng.randbytes(16 * records), dtype=np.uint8).tofile(path(name))

# Byte balance (default L: each root one leaf). 3000 records of lognormal
# sizes (median ~150 bytes, a tail to ~20 KB), sorted shortest first, so that
# even shares of the records would be very uneven shares of the bytes: one
# JSONL file, the same records dealt over three files (a dataset), and a tar
# archive of samples (a .txt of 4 bytes a unit of size, and a .cls) in the
# same order, written by Python's tarfile. No record exceeds 1/(8P) of the
# bytes for P <= 3 (checked).
sizes = sorted(int(rng.lognormvariate(5, 1.5)) for _ in range(3000))
lines = [json.dumps({"id": i, "text": "w" * s}) + "\n" for i, s in enumerate(sizes)]
assert max(map(len, lines)) * 8 * 3 <= sum(map(len, lines))
with open(path("sorted.jsonl"), "w") as f:
    f.writelines(lines)
os.makedirs(path("sorted_parts"))
for part in range(3):
    with open(path("sorted_parts/part%d.jsonl" % part), "w") as f:
        f.writelines(lines[part * 1000:(part + 1) * 1000])
with tarfile.open(path("sorted.tar"), "w", format=tarfile.USTAR_FORMAT) as archive:
    for i, s in enumerate(sizes):
        for extension, data in (("txt", b"t" * (4 * s)), ("cls", b"%d" % (i % 10))):
            member = tarfile.TarInfo("%06d.%s" % (i, extension))
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))

# Roots of many chunks shared by bytes (run with small chunks: L = 128 for
# the JSONL, 32 for the archive, over 8P chunks for P <= 3). Records of
# lognormal sizes sorted shortest first: even shares of the chunks would
# give one of 3 ranks about twice its share of the bytes. One JSONL file,
# the same records in three files cut off chunk boundaries, and a tar
# archive of 6000 samples (a .txt of 32 bytes a unit of size: the 512-byte
# blocks would hide smaller drifts). Whole chunks are shared, so a rank's share is off by less than
# the largest chunk and the longest record: checked below 15% of 1/P of
# the bytes for P <= 3 (docs/mpi.md, "How the work is shared").
def check_chunks(lengths, leaf):
    chunks = [sum(lengths[c:c + leaf]) for c in range(0, len(lengths), leaf)]
    assert len(chunks) >= 8 * 3
    assert max(chunks) + max(lengths) <= 0.15 * sum(lengths) / 3


sizes = sorted(int(rng.lognormvariate(4.5, 1.0)) for _ in range(30000))
lines = [json.dumps({"id": i, "text": "v" * s}) + "\n" for i, s in enumerate(sizes)]
check_chunks([len(line) for line in lines], 128)
with open(path("drifted.jsonl"), "w") as f:
    f.writelines(lines)
os.makedirs(path("drifted_parts"))
for part, (first, end) in enumerate(((0, 7000), (7000, 19001), (19001, 30000))):
    with open(path("drifted_parts/part%d.jsonl" % part), "w") as f:
        f.writelines(lines[first:end])
def write_archive(name, sizes, unit, first=0):
    """An archive of samples (a .txt of `unit` bytes a unit of size, and a
    .cls), keyed from `first` on; returns their frames' bytes."""
    frames = []
    with tarfile.open(path(name), "w", format=tarfile.USTAR_FORMAT) as archive:
        for i, s in enumerate(sizes, first):
            frame = 8  # a sample's frame: its length, then its members as the archive holds them
            for extension, data in (("txt", b"t" * (unit * s)), ("cls", b"%d" % (i % 10))):
                member = tarfile.TarInfo("%06d.%s" % (i, extension))
                member.size = len(data)
                archive.addfile(member, io.BytesIO(data))
                frame += 512 + (len(data) + 511) // 512 * 512
            frames.append(frame)
    return frames


sizes = sorted(int(rng.lognormvariate(4.5, 1.0)) for _ in range(6000))
check_chunks(write_archive("drifted.tar", sizes, 32), 32)

# Roots of many chunks whose last chunk holds over 40% of the bytes (run
# with L = 1024, the archive's 512: 30 chunks; that many records in the
# heavy chunk keep the writes' sampling spread small, see the test):
# records sorted by length, the last chunk's far longer, none over 1/(8P)
# of the bytes for P <= 3. No split of whole chunks shares those reads
# within 15%: each rank reads its 1/P of the bytes and sends the rest of a
# chunk to the rank that scatters it (docs/mpi.md, "How the work is
# shared"). One JSONL file, the same records in three files, and an
# archive of samples (a .txt of 4 bytes a unit of size, and a .cls).
def check_heavy_chunk(lengths, leaf):
    assert len(lengths) >= 8 * 3 * leaf
    assert sum(lengths[-leaf:]) >= 0.4 * sum(lengths)
    assert max(lengths) * 8 * 3 <= sum(lengths)


sizes = sorted(int(rng.lognormvariate(4.5, 0.8)) for _ in range(29 * 1024))
sizes += sorted(rng.randrange(2500, 4500) for _ in range(1024))
lines = [json.dumps({"id": i, "text": "u" * s}) + "\n" for i, s in enumerate(sizes)]
check_heavy_chunk([len(line) for line in lines], 1024)
with open(path("heavy_chunk.jsonl"), "w") as f:
    f.writelines(lines)
os.makedirs(path("heavy_chunk_parts"))
for part, (first, end) in enumerate(((0, 12000), (12000, 29900), (29900, len(lines)))):
    with open(path("heavy_chunk_parts/part%d.jsonl" % part), "w") as f:
        f.writelines(lines[first:end])
sizes = sorted(int(rng.lognormvariate(4.5, 0.8)) for _ in range(29 * 512))
sizes += sorted(rng.randrange(11000, 15000) for _ in range(512))
frames = write_archive("heavy_chunk.tar", sizes, 4)
check_heavy_chunk(frames, 512)
# The same samples in three archives, the middle one gzipped (by Python's
# gzip, its header's time 0): the plain archives' frames are read in place
# by their readers, the compressed one's by its holder.
os.makedirs(path("heavy_chunk_tars"))
for part, (first, end) in enumerate(((0, 5000), (5000, 14900), (14900, len(sizes)))):
    write_archive("heavy_chunk_tars/part%d.tar" % part, sizes[first:end], 4, first)
with open(path("heavy_chunk_tars/part1.tar"), "rb") as f, open(path("heavy_chunk_tars/part1.tar.gz"), "wb") as g:
    g.write(gzip.compress(f.read(), mtime=0))
os.remove(path("heavy_chunk_tars/part1.tar"))
# Its frames' bytes, which the ranks read once between them (the test checks).
with open(path("heavy_chunk.tar.frames"), "w") as f:
    f.write("%d\n" % sum(frames))
