"""Writes the inputs of the extshuffle-mpi tests into a directory, with the
real writers of each format: Python's csv and json modules, numpy's .npy.

usage: make_inputs.py DIRECTORY
"""
import csv
import json
import os
import random
import sys

import numpy as np

out = sys.argv[1]
rng = random.Random(20240607)


def path(name):
    return os.path.join(out, name)


# Fixed-size records: N not a multiple of L = 64, and 12-byte records so that
# no record boundary is a power of two.
np.arange(10007, dtype=np.uint64).tofile(path("records.bin"))
np.frombuffer(rng.randbytes(12 * 5003), dtype=np.uint8).tofile(path("records12.bin"))
np.arange(150, dtype=np.uint64).tofile(path("few.bin"))     # 3 chunks of L = 64: fewer than the ranks
np.arange(50, dtype=np.uint64).tofile(path("leaf.bin"))     # one leaf
open(path("empty.bin"), "wb").close()
open(path("empty.txt"), "wb").close()
# Large records: 300 of 4 KiB, gathered in windows at a small budget.
np.frombuffer(rng.randbytes(4096 * 300), dtype=np.uint8).tofile(path("large.bin"))

# CSV through the csv module: quoted fields holding newlines, commas and
# doubled quotes, empty fields, a header.
choices = ["plain", "with, comma", 'said "hi"', "two\nlines", "three\n\nlines, \"q\"", "", "x" * 300]
with open(path("quoted.csv"), "w", newline="") as f:
    writer = csv.writer(f, lineterminator="\n")
    writer.writerow(["id", "text", "value"])
    for i in range(3001):
        writer.writerow([i, rng.choice(choices), rng.random()])

# CSV the csv module does not write but reads: quotes inside unquoted fields
# (literal), a quoted field that spans several ranks' byte ranges, and a last
# record without its newline.
with open(path("tricky.csv"), "w", newline="") as f:
    f.write("h1,h2\n")
    for i in range(400):
        if i == 100:
            f.write('%d,"%s"\n' % (i, 'long\n"",field,' * 3000))
        elif i % 7 == 0:
            f.write('%d,a"b"c\n' % i)
        elif i % 11 == 0:
            f.write('%d,"q""x\ny"\n' % i)
        else:
            f.write("%d,plain\n" % i)
    f.write('400,"the last record, without its newline"')

with open(path("lines.txt"), "w") as f:
    for i in range(4000):
        f.write("line %d %s\n" % (i, "z" * rng.randint(0, 120)))
    f.write("the last line, without its newline")

with open(path("zero.txt"), "wb") as f:
    for i in range(2500):
        f.write(("item %d\nwith a newline inside" % i).encode() + b"\0")

with open(path("data.jsonl"), "w") as f:
    for i in range(3000):
        f.write(json.dumps({"i": i, "s": "y" * rng.randint(0, 200), "f": rng.random()}) + "\n")

np.save(path("array.npy"), np.arange(4099 * 3, dtype=np.float32).reshape(4099, 3))
np.save(path("labels.npy"), np.arange(4099, dtype=np.int64))

# JSONL of heavy-tailed record sizes (lognormal, median ~1 KB, a tail past
# 100 KB): at a small budget its chunks are larger than memory and the root's
# split routes them record by record.
with open(path("heavy.jsonl"), "w") as f:
    for i in range(6000):
        size = min(150000, int(rng.lognormvariate(7.0, 1.3)))
        f.write(json.dumps({"id": i, "text": "w" * size}) + "\n")
