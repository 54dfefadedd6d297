"""The dataset outputs of extshuffle-mpi against extshuffle's, read by the
real readers: Python's json and csv modules, numpy's .npy reader, gzip and
the zstd tool.

usage: check_pieces.py make DIRECTORY
         writes data.jsonl, long.jsonl (4 MiB: a rank's range of it
         spans more than one 1 MiB spool piece), table.csv (quoted fields with newlines),
         features.npy and labels.npy (aligned rows), and datasets of files:
         mixed/ (JSONL files, plain, .gz and .zst, one lacking its last
         newline), tfrecord/ (TFRecord files) and features/ + labels/
         (aligned .npy files); made once per build tree (mpi_suite.hpp)
       check_pieces.py check SINGLE MPI...
         SINGLE and each MPI hold one run's pieces and its manifest.json,
         written under the same relative names (extshuffle's run once, then
         extshuffle-mpi's on each rank count: one process checks them all);
         exits 1 naming each MPI directory and what differs in it
"""
import csv
import glob
import random
import struct
import gzip
import io
import json
import os
import subprocess
import sys

import numpy as np


def make(out):
    with open(os.path.join(out, "data.jsonl"), "w") as f:
        for i in range(6000):
            f.write(json.dumps({"id": i, "text": "é" * (i % 17), "nested": {"k": [i, i * i]}}) + "\n")
    with open(os.path.join(out, "long.jsonl"), "w") as f:
        for i in range(50000):
            f.write(json.dumps({"id": i, "text": "w" * (i * 7919 % 97)}) + "\n")
    with open(os.path.join(out, "table.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "comment"])
        for i in range(3000):
            w.writerow([i, "two\nlines, quoted" if i % 5 == 0 else "plain %d" % i])
    rows = np.arange(5000 * 3, dtype=np.int32).reshape(5000, 3)
    np.save(os.path.join(out, "features.npy"), rows)
    np.save(os.path.join(out, "labels.npy"), np.arange(5000, dtype=np.float64) * 0.5)


def crc32c_masked(data):
    """TFRecord's checksum: CRC-32C, rotated and offset (the format's mask)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord_frame(data):
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", crc32c_masked(length)) + data + struct.pack("<I", crc32c_masked(data))


def read_tfrecords(path, data):
    """Every frame of a TFRecord file, both CRCs checked, as TensorFlow's reader does."""
    records, at = [], 0
    while at < len(data):
        (length,) = struct.unpack_from("<Q", data, at)
        (length_crc,) = struct.unpack_from("<I", data, at + 8)
        assert length_crc == crc32c_masked(data[at : at + 8]), "%s: bad length CRC at %d" % (path, at)
        payload = data[at + 12 : at + 12 + length]
        (data_crc,) = struct.unpack_from("<I", data, at + 12 + length)
        assert data_crc == crc32c_masked(payload), "%s: bad data CRC at %d" % (path, at)
        records.append(payload)
        at += 16 + length
    return records


def make_datasets(out):
    rng = random.Random(5)
    os.makedirs(os.path.join(out, "mixed"))
    for k, n in enumerate([900, 70, 1300, 15, 640, 400]):
        text = "".join(json.dumps({"f": k, "i": i, "s": "x" * int(rng.paretovariate(1.2))}) + "\n" for i in range(n))
        if k == 3:
            text = text[:-1]  # its last record lacks its newline
        path = os.path.join(out, "mixed", "part%d.jsonl" % k)
        with open(path, "w") as f:
            f.write(text)
        if k % 3 == 1:
            subprocess.run(["gzip", path], check=True)
        elif k % 3 == 2:
            subprocess.run(["zstd", "-q", "--rm", path], check=True)
    os.makedirs(os.path.join(out, "tfrecord"))
    for k, n in enumerate([500, 90, 800]):
        with open(os.path.join(out, "tfrecord", "part%d.tfrecord" % k), "wb") as f:
            for i in range(n):
                f.write(tfrecord_frame(bytes(rng.randrange(256) for _ in range(rng.randint(0, 64)))))
    for name in ("features", "labels"):
        os.makedirs(os.path.join(out, name))
    first = 0
    for k, n in enumerate([700, 45, 900]):
        rows = np.arange(first, first + n)
        np.save(os.path.join(out, "features", "part%d.npy" % k), np.stack([rows, rows * 3], axis=1).astype(np.int64))
        np.save(os.path.join(out, "labels", "part%d.npy" % k), rows.astype(np.int32))
        first += n


def decompressed(path):
    if path.endswith(".gz"):
        return gzip.open(path).read()
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-dcq", path], capture_output=True, check=True).stdout
    with open(path, "rb") as f:
        return f.read()


def read_records(path, data):
    """The records of one piece, as its format's real reader sees them."""
    name = path[: -len(".gz")] if path.endswith(".gz") else path[: -len(".zst")] if path.endswith(".zst") else path
    if name.endswith(".jsonl"):
        return [json.loads(line) for line in data.decode("utf-8").splitlines()]
    if name.endswith(".csv"):
        rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
        assert rows and rows[0] == ["id", "comment"], "%s: no header" % path
        return rows[1:]
    if name.endswith(".npy"):
        return list(np.load(io.BytesIO(data)))
    if name.endswith(".tfrecord"):
        return read_tfrecords(path, data)
    raise SystemExit("unknown format: " + path)


def check(single, mpi):
    with open(os.path.join(single, "manifest.json")) as f:
        want = json.load(f)
    with open(os.path.join(mpi, "manifest.json")) as f:
        got = json.load(f)
    bad = []
    for a, b in zip(want["outputs"], got["outputs"]):
        compressed = a["path"].endswith((".gz", ".zst"))
        if compressed:  # each rank's frames: the same records, other bytes
            a, b = dict(a), dict(b)
            for key in ("bytes", "xxh64"):
                a.pop(key)
                b.pop(key)
        if a != b:
            bad.append("manifest entry %s != %s" % (b, a))
    for key in want:
        if key != "outputs" and want[key] != got[key]:
            bad.append("manifest %s: %s != %s" % (key, got[key], want[key]))
    if len(want["outputs"]) != len(got["outputs"]):
        bad.append("manifest outputs: %d != %d" % (len(got["outputs"]), len(want["outputs"])))
    total = 0
    for entry in got["outputs"]:
        path = os.path.join(mpi, entry["path"])
        data = decompressed(path)
        if data != decompressed(os.path.join(single, entry["path"])):
            bad.append(entry["path"] + ": decompressed bytes differ from extshuffle's")
        if os.path.getsize(path) != entry["bytes"]:
            bad.append(entry["path"] + ": size is not the manifest's")
        records = read_records(path, data)
        if len(records) != entry["records"]:
            bad.append("%s: %d records read, the manifest says %d" % (entry["path"], len(records), entry["records"]))
        total += len(records)
    pieces = sorted(os.path.relpath(p, mpi) for p in glob.glob(os.path.join(mpi, "*")))
    listed = sorted([e["path"] for e in got["outputs"]] + ["manifest.json"])
    if pieces != listed:
        bad.append("files %s, not %s" % (pieces, listed))
    if total != got["records_written"] * max(1, len({e.get("dataset", 0) for e in got["outputs"]})):
        bad.append("%d records in the pieces, %d written" % (total, got["records_written"]))
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
        make_datasets(sys.argv[2])
    else:
        if len(sys.argv) < 4:
            sys.exit("check: no MPI directory to check")
        failed = 0
        for mpi in sys.argv[3:]:
            if check(sys.argv[2], mpi):
                print("in " + mpi)
                failed = 1
        sys.exit(failed)
