"""Bad input through Dataset: one line, nothing lost, never a wrong record or
a crashed worker. An index of other inputs, a truncated index, an input that
changed (before opening, after, inside a DataLoader's worker), a record range
past the file's end, an index out of range, compressed and streamed inputs,
a stale index beside the inputs (a warning, and one built in the cache)."""

import os
import pickle
import shutil
import subprocess
import warnings

import numpy as np
import pytest

import extshuffle


@pytest.fixture
def cache(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("EXTSHUFFLE_CACHE_DIR", str(directory))
    return directory


def lines_file(path, n=200, width=10):
    path.write_bytes(b"".join(f"{i:0{width}d}\n".encode() for i in range(n)))
    return path


def one_line(error):
    text = str(error.value)
    assert "\n" not in text, text
    return text


def keep_time(path, before):
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_an_index_of_other_inputs_is_refused(binary, tmp_path, cache):
    a, b = lines_file(tmp_path / "a.txt"), lines_file(tmp_path / "b.txt", n=300)
    subprocess.run([binary, "--index-only", a, b], check=True)
    with pytest.raises(extshuffle.Error) as caught:
        extshuffle.Dataset(a, index=tmp_path / ".b.txt.extshuffle-index")
    assert "is not the index of" in one_line(caught) and caught.value.exit_code == 1
    with pytest.raises(extshuffle.Error) as caught:
        extshuffle.Dataset(a, index=tmp_path / ".a.txt.extshuffle-index", format="csv")
    assert "it was made reading it as lines" in one_line(caught)
    with pytest.raises(extshuffle.UsageError) as caught:
        extshuffle.Dataset([a, b], index=tmp_path / ".a.txt.extshuffle-index")
    assert "give one per file" in one_line(caught)


def test_a_truncated_index_is_refused(binary, tmp_path, cache):
    a = lines_file(tmp_path / "a.txt", n=5000)
    subprocess.run([binary, "--index-only", a, "-o", tmp_path / "a.index"], check=True)
    whole = (tmp_path / "a.index").read_bytes()
    for cut in (len(whole) - 1, len(whole) // 2, 10):
        (tmp_path / "cut.index").write_bytes(whole[:cut])
        with pytest.raises(extshuffle.Error) as caught:
            extshuffle.Dataset(a, index=tmp_path / "cut.index")
        assert "cut.index" in one_line(caught)


def test_an_input_that_changed_is_refused_and_a_stale_index_beside_it_rebuilt(binary, tmp_path, cache):
    a = lines_file(tmp_path / "a.txt")
    subprocess.run([binary, "--index-only", a], check=True)
    beside = tmp_path / ".a.txt.extshuffle-index"
    assert extshuffle.Dataset(a)[3] == b"0000000003" and not cache.exists()
    with open(a, "ab") as f:
        f.write(b"appended\n")
    # Given explicitly: refused, naming the file that changed.
    with pytest.raises(extshuffle.Error) as caught:
        extshuffle.Dataset(a, index=beside)
    assert f"'{a}'" in one_line(caught) and "the input holds 2209" in str(caught.value)
    # Found beside it: a warning saying why, and an index built in the cache.
    with pytest.warns(UserWarning, match="is not the index of .*the input holds 2209"):
        ds = extshuffle.Dataset(a, progress=False)
    assert len(ds) == 201 and ds[-1] == b"appended" and len(os.listdir(cache)) == 1
    # The cache's own index of a file that changed since: rebuilt silently.
    with open(a, "ab") as f:
        f.write(b"again\n")
    with warnings.catch_warnings(record=True):
        assert extshuffle.Dataset(a, progress=False)[-1] == b"again"


def test_changes_after_opening_give_one_line_in_the_process_and_in_workers(tmp_path, cache):
    torch = pytest.importorskip("torch")
    a = lines_file(tmp_path / "a.txt", n=1000)
    ds = extshuffle.Dataset(a, progress=False)
    before = os.stat(a)
    # Same size, same time, terminators moved: the records' own check refuses them.
    a.write_bytes(b"".join(f"{i:011d}\n".encode() for i in range(1000))[:before.st_size])
    keep_time(a, before)
    with pytest.raises(extshuffle.Error) as caught:
        ds[500]
    assert "does not end with its terminator" in one_line(caught)
    loader = torch.utils.data.DataLoader(ds, batch_size=16, num_workers=1)  # a worker process reads
    with pytest.raises(extshuffle.Error, match="changed since its index was made"):
        list(loader)
    # Shrunk after the file was opened: the read comes up short.
    b = lines_file(tmp_path / "b.txt", n=1000)
    ds = extshuffle.Dataset(b, progress=False)
    assert ds[0] == b"0000000000"
    os.truncate(b, 5000)
    with pytest.raises(extshuffle.Error) as caught:
        ds[999]
    assert "changed since its index was made" in one_line(caught)


def test_a_record_range_past_the_files_end_is_refused(binary, tmp_path, cache):
    a = lines_file(tmp_path / "a.txt", n=100)
    subprocess.run([binary, "--index-only", a, "-o", tmp_path / "a.index"], check=True)
    index = bytearray((tmp_path / "a.index").read_bytes())
    index[64 + 8 * 50: 64 + 8 * 51] = (10**9).to_bytes(8, "little")  # offsets[50] far past the end
    (tmp_path / "bad.index").write_bytes(index)
    ds = extshuffle.Dataset(a, index=tmp_path / "bad.index")
    assert ds[10] == b"0000000010"
    for k in (49, 50):
        with pytest.raises(extshuffle.Error) as caught:
            ds[k]
        assert "a damaged index, or one of another file" in one_line(caught)


def test_out_of_range_indices(tmp_path, cache):
    ds = extshuffle.Dataset(lines_file(tmp_path / "a.txt", n=10), progress=False)
    assert ds[-10] == ds[0]
    for bad in (10, -11, 2**70):
        with pytest.raises(IndexError):
            ds[bad]
    with pytest.raises(IndexError):
        ds.get_batch([0, 3, 10])
    with pytest.raises(IndexError):
        ds.get_batch(np.array([0, 12], dtype=np.uint64))
    with pytest.raises(TypeError):
        ds.get_batch([0.5])
    assert list(ds) == ds[:] and len(ds[:]) == 10


def test_inputs_that_cannot_be_read_at_offsets_are_refused(tmp_path, cache):
    a = lines_file(tmp_path / "a.txt")
    for name, tool in (("a.txt.gz", "gzip"), ("a.jsonl.zst", "zstd"), ("a.xz", "xz"), ("a.bz2", "bzip2"),
                       ("a.lz4", "lz4")):
        shutil.copy(a, tmp_path / name)
        with pytest.raises(extshuffle.UsageError) as caught:
            extshuffle.Dataset(tmp_path / name)
        message = one_line(caught)
        assert f"is compressed ({tool})" in message and "decompress it first" in message
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(extshuffle.UsageError) as caught:
        extshuffle.Dataset(tmp_path / "fifo")
    assert "not a regular file" in one_line(caught)


def test_inputs_the_tool_refuses_as_one_dataset_are_refused(tmp_path, cache):
    (tmp_path / "a.csv").write_bytes(b"id,x\n1,2\n")
    (tmp_path / "b.csv").write_bytes(b"id,y\n3,4\n")
    with pytest.raises(extshuffle.Error) as caught:
        extshuffle.Dataset([tmp_path / "a.csv", tmp_path / "b.csv"], progress=False)
    assert "inputs differ in their header" in one_line(caught)
    np.save(tmp_path / "x.npy", np.zeros((3, 2), "<f4"))
    np.save(tmp_path / "y.npy", np.zeros((4,), "<f4"))
    with pytest.raises(extshuffle.Error) as caught:
        extshuffle.Dataset([tmp_path / "x.npy", tmp_path / "y.npy"], aligned=True)
    assert "aligned inputs differ in record count" in one_line(caught)
    with pytest.raises(extshuffle.Error) as caught:
        extshuffle.Dataset([tmp_path / "x.npy", tmp_path / "y.npy"])
    assert "inputs differ in the shape of a row" in one_line(caught)
    (tmp_path / "bin.dat").write_bytes(b"abc\0def")
    with pytest.raises(extshuffle.UsageError):
        extshuffle.Dataset(tmp_path / "bin.dat")
    # A format the tool has no word for, named in shuffle()'s words.
    with pytest.raises(extshuffle.UsageError) as caught:
        extshuffle.Dataset(tmp_path / "a.csv", format="npy")
    assert one_line(caught) == ("invalid format= 'npy': expected one of "
                                "auto, binary, lines, csv, tsv, jsonl, tfrecord, tar")


def test_duplicate_extensions_in_a_tar_sample_are_refused_and_raw_reads_them(binary, tmp_path, cache):
    import io
    import tarfile
    with tarfile.open(tmp_path / "a.tar", "w") as archive:
        for name in ("x.jpg", "x.JPG", "y.jpg"):
            info = tarfile.TarInfo(name)
            info.size = 3
            archive.addfile(info, io.BytesIO(name[-3:].encode()))
    ds = extshuffle.Dataset(tmp_path / "a.tar", progress=False)
    assert len(ds) == 2 and ds[1] == {"__key__": "y", "jpg": b"jpg"}
    with pytest.raises(extshuffle.Error) as caught:
        ds[0]
    assert "two members with the extension 'jpg'" in one_line(caught)
    assert ds.raw(0).count(b"ustar") == 2


def test_a_worker_reopens_by_path_without_a_crash(tmp_path, cache):
    a = lines_file(tmp_path / "a.txt")
    ds = extshuffle.Dataset(a, progress=False)
    clone = pickle.loads(pickle.dumps(ds))
    a.write_bytes(a.read_bytes() + b"x\n")
    with pytest.raises(extshuffle.Error, match="changed since its index was made"):
        clone[0]
