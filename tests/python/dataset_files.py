"""Files for the Dataset tests, built from records known in advance: lines,
CSV with quoted terminators, JSONL of heavy-tailed sizes, TFRecord frames,
WebDataset tar samples, .npy arrays; and the CLI's output framing of records
(TFRecord frames with their CRCs, written here)."""

import io
import json
import random
import struct
import tarfile

import numpy as np


def _crc32c_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC32C[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord_frame(data):
    """A TFRecord frame holding `data`, as TensorFlow writes it."""
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked_crc(length)) + data + struct.pack("<I", masked_crc(data))


def heavy_tailed_jsonl(n, seed):
    """n JSON lines, most short, a few long (a Pareto tail)."""
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        size = min(int(rng.paretovariate(1.2) * 20), 20000)
        lines.append(json.dumps({"id": i, "text": "x" * size}).encode() + b"\n")
    return lines


def csv_records(n, seed):
    """CSV records below a header, some with quoted fields holding commas,
    quotes, newlines and CRLF."""
    rng = random.Random(seed)
    records = []
    for i in range(n):
        kind = rng.randrange(4)
        if kind == 0:
            text = f'"multi\nline {i}, with ""quotes"""'
        elif kind == 1:
            text = f'"crlf\r\ninside {i}"'
        else:
            text = f"plain {i}"
        records.append(f"{i},{text}\n".encode())
    return records


def tar_samples(n, seed, image_bytes=200):
    """n WebDataset samples: (key, {extension: data}), images of about
    `image_bytes` random bytes, a class and some JSON."""
    rng = random.Random(seed)
    samples = []
    for i in range(n):
        key = f"sample{i:06d}" if i % 7 else f"dir.v1/sample{i:06d}"
        members = {"jpg": rng.randbytes(rng.randrange(1, image_bytes)), "cls": str(i % 10).encode()}
        if i % 3 == 0:
            members["json"] = json.dumps({"i": i}).encode()
        samples.append((key, members))
    return samples


def write_tar(path, samples, long_names=False):
    """The samples as a tar archive (pax format: long names in pax headers)."""
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as archive:
        for key, members in samples:
            for extension, data in members.items():
                name = ("long/" * 30 if long_names else "") + f"{key}.{extension}"
                info = tarfile.TarInfo(name)
                info.size = len(data)
                info.mtime = 1700000000
                archive.addfile(info, io.BytesIO(data))


def tar_members(data):
    """The samples of archive bytes as Python's tarfile reads them:
    [(key, {extension: data})], grouped as webdataset groups them."""
    samples = []
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        for info in archive:
            if not info.isfile():
                continue
            directory, _, base = info.name.rpartition("/")
            stem, dot, extension = base.partition(".")
            key = (directory + "/" if directory else "") + stem
            if not samples or samples[-1][0] != key:
                samples.append((key, {}))
            samples[-1][1][extension.lower()] = archive.extractfile(info).read()
    return samples


def npy_bytes(array):
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()
