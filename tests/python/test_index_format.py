"""The record index's format (docs/cli.md "Record indexes") read with numpy
and json alone: the reader the page gives, run as written in an interpreter
that cannot import extshuffle (-I), on indexes the tool writes for lines,
--skip-empty, CSV, TFRecord, tar and .npy; every record it finds must be the
record the file holds."""

import json
import pathlib
import re
import subprocess
import sys

import numpy as np

from dataset_files import tar_samples, tfrecord_frame, write_tar

REPO = pathlib.Path(__file__).resolve().parents[2]


def documented_reader():
    """The python block of docs/cli.md's "Record indexes" section."""
    text = (REPO / "docs" / "cli.md").read_text()
    section = text[text.index("## Record indexes"):]
    section = section[:section.index("\n## ", 5)]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1
    return blocks[0]


def run_isolated(script, cwd):
    """`script` in a Python that sees numpy but not extshuffle; its stdout."""
    result = subprocess.run([sys.executable, "-I", "-c", script], cwd=cwd, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_documented_reader_runs_as_written(binary, tmp_path):
    lines = [f'{{"n": {i}, "pad": "{"x" * (i % 17)}"}}\n'.encode() for i in range(40)]
    (tmp_path / "train.jsonl").write_bytes(b"".join(lines))
    subprocess.run([binary, "--index-only", tmp_path / "train.jsonl"], check=True)
    script = documented_reader() + "\nimport sys\nassert 'extshuffle' not in sys.modules\nprint(record_10.hex())\n"
    assert "import extshuffle" not in script
    assert bytes.fromhex(run_isolated(script, tmp_path).strip()) == lines[10]


def read_everything(binary, tmp_path, path, options=()):
    """(header, records by the arrays' rule) of `path`'s index, read in isolation."""
    index = tmp_path / "x.index"
    subprocess.run([binary, "--index-only", path, "-o", index, *options], check=True)
    reader = documented_reader()
    reader = reader[:reader.index("header, arrays = read_index(")]
    script = reader + f"""
header, arrays = read_index({str(index)!r})
data = open({str(path)!r}, "rb").read()
records = []
n = header["records"]
if "offsets" in arrays:
    o = arrays["offsets"]
    records = [data[o[k]:o[k + 1]].hex() for k in range(n)]
elif "spans" in arrays:
    records = [data[a:b].hex() for a, b in arrays["spans"]]
elif "ranges" in arrays:
    r, first = arrays["ranges"], arrays["range_first"]
    m, mfirst, names = arrays["members"], arrays["member_first"], bytes(arrays["names"])
    for k in range(n):
        raw = b"".join(data[o:o + size] for o, size in r[first[k]:first[k + 1]])
        members = []
        for j in range(mfirst[k], mfirst[k + 1]):
            name = names[(m[j - 1][2] if j else 0):m[j][2]].decode()
            members.append([name, data[m[j][0]:m[j][0] + m[j][1]].hex()])
        records.append([raw.hex(), members])
else:
    size = header["reading"]["record_size"]
    records = [data[header["data_offset"] + k * size:][:size].hex() for k in range(n)]
print(json.dumps({{"header": header, "records": records}}))
"""
    return json.loads(run_isolated(script, tmp_path))


def test_every_layout_reads_back_its_records(binary, tmp_path):
    csv = tmp_path / "a.csv"
    csv.write_bytes(b'id,t\n1,"a\nb"\n2,c\r\n3,"d""e"')
    got = read_everything(binary, tmp_path, csv)
    assert [bytes.fromhex(r) for r in got["records"]] == [b'1,"a\nb"\n', b"2,c\r\n", b'3,"d""e"']
    assert got["header"]["data_offset"] == 5 and got["header"]["add_terminator"]

    blank = tmp_path / "b.txt"
    blank.write_bytes(b"\n a\n\t\n b\n  \n")
    got = read_everything(binary, tmp_path, blank, ["--skip-empty"])
    assert [bytes.fromhex(r) for r in got["records"]] == [b" a\n", b" b\n"]
    assert got["header"]["reading"]["skip_empty"] is True

    frames = [b"", b"one", b"\0" * 1000]
    tf = tmp_path / "c.tfrecord"
    tf.write_bytes(b"".join(tfrecord_frame(f) for f in frames))
    got = read_everything(binary, tmp_path, tf)
    assert [bytes.fromhex(r) for r in got["records"]] == [tfrecord_frame(f) for f in frames]

    samples = tar_samples(20, 1)
    write_tar(tmp_path / "d.tar", samples, long_names=True)
    got = read_everything(binary, tmp_path, tmp_path / "d.tar")
    assert len(got["records"]) == 20
    for (key, members), (raw, found) in zip(samples, got["records"]):
        assert [(name, bytes.fromhex(data)) for name, data in found] == \
            [("long/" * 30 + f"{key}.{extension}", data) for extension, data in members.items()]
        assert bytes.fromhex(raw).count(b"ustar") >= len(members)

    array = np.arange(24, dtype="<u2").reshape(4, 3, 2)
    np.save(tmp_path / "e.npy", array)
    got = read_everything(binary, tmp_path, tmp_path / "e.npy")
    assert [bytes.fromhex(r) for r in got["records"]] == [row.tobytes() for row in array]
    assert got["header"]["arrays"] == {} and got["header"]["reading"]["format"] == "npy"
