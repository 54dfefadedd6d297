#!/usr/bin/env python3
"""Writes the small text and label samples in data/ used by the README's
worked examples and the tests. Standard library only and deterministic: the
same bytes on every run and every Python 3 version (a fixed 64-bit LCG, not
the random module, whose algorithms may change between versions).

Run from anywhere:  python3 data/make_samples.py
Files (re)written:
  sample.jsonl             1000 JSON objects, one per line, of varying length, some unicode
  sample.jsonl.gz          the same, gzip-compressed (no timestamp in the header; the
                           compressed bytes may differ with the zlib version, the content not)
  sample-with-header.csv   a header line and 1000 rows; some fields quoted with commas,
                           doubled quotes and newlines inside (RFC 4180)
  sample-lines.txt         1000 plain text lines
  sample-labels.npy        int64 labels 0..999, one per row of sample-features.npy
                           (row i of the features holds 4i..4i+3), to show that two
                           aligned files stay aligned
Not written here: sample-records-u64.bin and sample-features.npy (older samples).
"""

import csv
import gzip
import io
import json
import pathlib
import struct

DATA = pathlib.Path(__file__).resolve().parent
ROWS = 1000


class Lcg:
    """Knuth's MMIX LCG; the high bits are good enough to pick sample words."""

    def __init__(self, seed):
        self.state = seed & (2**64 - 1)

    def next(self, bound):
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) & (2**64 - 1)
        return (self.state >> 33) % bound

    def pick(self, items):
        return items[self.next(len(items))]


WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliett", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo",
         "sierra", "tango", "uniform", "victor", "whiskey", "xray", "yankee", "zulu"]
# A few non-ASCII words: JSON and CSV records carry UTF-8 through unchanged.
UNICODE_WORDS = ["café", "naïve", "Zürich", "Ærøskøbing", "日本語", "Ελληνικά", "😀", "Łódź"]
CITIES = ["Berlin", "Paris", "Lisbon", "Oslo", "Zürich", "Kraków", "Tokyo", "Lima", "Cairo", "Quito"]


def words(lcg, count, unicode_every=0):
    chosen = []
    for _ in range(count):
        if unicode_every and lcg.next(unicode_every) == 0:
            chosen.append(lcg.pick(UNICODE_WORDS))
        else:
            chosen.append(lcg.pick(WORDS))
    return " ".join(chosen)


def sample_jsonl():
    lcg = Lcg(1)
    lines = []
    for i in range(ROWS):
        record = {"id": i, "name": words(lcg, 1 + lcg.next(2), unicode_every=12),
                  "score": lcg.next(10000) / 100}
        if lcg.next(3) == 0:
            record["tags"] = [lcg.pick(WORDS) for _ in range(1 + lcg.next(4))]
        if lcg.next(4) == 0:
            record["note"] = words(lcg, 2 + lcg.next(10), unicode_every=6)
        lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    return ("\n".join(lines) + "\n").encode()


def sample_csv():
    lcg = Lcg(2)
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(["id", "name", "city", "comment", "amount"])
    for i in range(ROWS):
        kind = lcg.next(10)
        if kind == 0:
            comment = words(lcg, 2) + ", " + words(lcg, 2)            # an embedded comma
        elif kind == 1:
            comment = 'said "' + words(lcg, 1) + '" twice'             # doubled quotes
        elif kind == 2:
            comment = words(lcg, 2) + "\n" + words(lcg, 3)            # a newline inside the field
        elif kind == 3:
            comment = ""
        else:
            comment = words(lcg, 1 + lcg.next(4), unicode_every=10)
        writer.writerow([i, words(lcg, 1).title(), lcg.pick(CITIES), comment,
                         "%d.%02d" % (lcg.next(1000), lcg.next(100))])
    return out.getvalue().encode()


def sample_lines():
    lcg = Lcg(3)
    return "".join("line %04d %s\n" % (i, words(lcg, 1 + lcg.next(5))) for i in range(ROWS)).encode()


def npy_v1(descr, shape, data):
    """A .npy file of format version 1.0: magic, header length, dict padded with
    spaces and a newline to a multiple of 64 bytes, then the raw C-order data."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d," % d for d in shape))
    total = 10 + len(header) + 1
    header += " " * ((-total) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + data


def sample_labels():
    return npy_v1("<i8", (ROWS,), struct.pack("<%dq" % ROWS, *range(ROWS)))


def main():
    jsonl = sample_jsonl()
    files = {
        "sample.jsonl": jsonl,
        "sample.jsonl.gz": gzip.compress(jsonl, compresslevel=9, mtime=0),
        "sample-with-header.csv": sample_csv(),
        "sample-lines.txt": sample_lines(),
        "sample-labels.npy": sample_labels(),
    }
    for name, content in files.items():
        (DATA / name).write_bytes(content)
        print("%-24s %6d bytes" % (name, len(content)))


if __name__ == "__main__":
    main()
