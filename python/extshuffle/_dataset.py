"""Dataset: the records of files read by their number, through each file's
record index (docs/python.md, "Reading records in the order"). Record i is
the i-th record the extshuffle tool counts in the files, so with
p = Permutation(len(ds), seed) the records ds[p[0]], ds[p[1]], ... are, in the
tool's framing, the output of `extshuffle FILES --seed seed`. Map-style, as
torch's Dataset protocol wants it (len, [i], __getitems__); torch is not
needed."""

import hashlib
import io
import operator
import os
import warnings

import numpy as np

from . import _native
from ._errors import Error, UsageError
from ._shuffle import _paths

_READING_OPTIONS = ("format", "header", "skip_empty", "zero_terminated", "ignore_zeros", "record_size")


def default_cache_dir():
    """Where built indexes go: $EXTSHUFFLE_CACHE_DIR, else
    $XDG_CACHE_HOME/extshuffle/indexes, else ~/.cache/extshuffle/indexes."""
    if os.environ.get("EXTSHUFFLE_CACHE_DIR"):
        return os.environ["EXTSHUFFLE_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "extshuffle", "indexes")


def _cache_path(cache_dir, path, options):
    """The cache's index of `path` read with `options`: named by the file's
    real path, device, inode and the options, so that two files never share
    one (a changed file's is found stale and rebuilt)."""
    st = os.stat(path)
    key = repr((os.path.realpath(path), st.st_dev, st.st_ino, sorted(options.items())))
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return os.path.join(cache_dir, f"{digest}-{os.path.basename(path)[:64]}.extshuffle-index")


def _index_problem(path, index, options):
    """Why `index` is not the index of `path` as it is now (one line), or None."""
    try:
        _native.check_index_of(path, index, options)
    except UsageError:
        raise
    except Error as error:
        return str(error)
    return None


def _build_indexes(pairs, options, progress):
    """Builds each (file, index path) pair's index: the tool's --index-only Job,
    run by the library in a child interpreter (as shuffle() runs a Job)."""
    from ._shuffle import shuffle
    os.makedirs(os.path.dirname(pairs[0][1]) or ".", exist_ok=True)
    cli = {name: value for name, value in options.items() if value is not None and value is not False}
    shuffle([f for f, _ in pairs], [i for _, i in pairs], seed=0, index_only=True, progress=progress, **cli)


def _find_indexes(files, options, index, cache_dir, progress):
    """Each file's index: given, beside it, or in the cache (built there when
    missing or stale). Files of fixed-size records and .npy rows need none ("")."""
    needed = [_native.needs_index(f, options) for f in files]
    if index is not None:
        given = _paths(index, "index")
        if len(given) != len(files):
            raise UsageError(f"index: {len(given)} index files for {len(files)} input files: give one per file "
                             "(a directory counts as its files)")
        return [g if need else "" for g, need in zip(given, needed)]
    found, missing = [], []
    for path, need in zip(files, needed):
        if not need:
            found.append("")
            continue
        beside = _native.index_path_beside(path)
        if os.path.exists(beside):
            problem = _index_problem(path, beside, options)
            if problem is None:
                found.append(beside)
                continue
            warnings.warn(f"extshuffle: {problem}; using an index in the cache instead", stacklevel=4)
        cached = _cache_path(cache_dir, path, options)
        if not (os.path.exists(cached) and _index_problem(path, cached, options) is None):
            missing.append((path, cached))
        found.append(cached)
    if missing:
        _build_indexes(missing, options, progress)
    return found


def _indices(values, n):
    """`values` (ints, negative ones from the end) as uint64, each checked."""
    array = np.asarray(values)
    if array.dtype == object:  # Python ints beyond 64 bits
        raise IndexError(f"record index out of range: the dataset holds {n} records")
    if array.dtype == np.uint64:
        if array.size and int(array.max()) >= n:
            raise IndexError(f"record index {int(array.max())} out of range: the dataset holds {n} records")
        return np.ascontiguousarray(array.reshape(-1))
    if array.size == 0:
        return np.zeros(0, dtype=np.uint64)
    if array.dtype.kind not in "iu":
        raise TypeError(f"record indices must be integers, not {array.dtype}")
    array = array.astype(np.int64, copy=False).reshape(-1)
    array = np.where(array < 0, array + n, array)
    bad = (array < 0) | (array >= n)
    if bad.any():
        raise IndexError(f"record index {int(np.asarray(values).reshape(-1)[np.argmax(bad)])} out of range: "
                         f"the dataset holds {n} records")
    return array.astype(np.uint64)


def _tar_sample(key, members):
    """A tar sample as webdataset hands it: {"__key__": key, extension: data},
    the extension lower-cased (a member named just `key` has the extension "")."""
    sample = {"__key__": key}
    for name, data in members:
        extension = name[len(key) + 1:] if len(name) > len(key) else ""
        extension = extension.lower()
        if extension in sample:
            raise Error(f"tar sample '{key}' has two members with the extension '{extension}': a dict holds one "
                        "(read the sample's bytes with Dataset.raw())")
        sample[extension] = data
    return sample


class Dataset:
    """The records of `paths` (a path or a list: files and directories, read
    as one dataset in order, as the tool reads them), by their number.

    format, header, skip_empty, zero_terminated, ignore_zeros, record_size:
    the tool's options of the same names. ds[i] is record i: bytes without the
    terminator for lines, CSV, TSV and JSONL; a TFRecord frame's data; for a
    tar archive a dict of the sample's members by extension with "__key__";
    a numpy row for .npy; bytes for fixed-size records (a numpy array of
    `dtype` with dtype=). `transform` is applied to each record read.

    index: the files' index files (one per file), else each file's index
    beside it (".NAME.extshuffle-index", extshuffle --index-only / --index),
    else one in `cache_dir` (default_cache_dir()), built there with
    `progress` (a callable(done, total), False, or None for a tqdm bar).

    aligned=True: `paths` is a list of datasets (each a path or a list)
    of equal record counts, and ds[i] is the tuple of their records i."""

    def __init__(self, paths, *, format="auto", header=None, skip_empty=False, zero_terminated=False,
                 ignore_zeros=False, record_size=None, dtype=None, index=None, cache_dir=None, progress=None,
                 transform=None, aligned=False):
        self.transform = transform
        options = {"format": format, "header": header, "skip_empty": skip_empty,
                   "zero_terminated": zero_terminated, "ignore_zeros": ignore_zeros, "record_size": record_size}
        if aligned:
            parts = list(paths) if not isinstance(paths, (str, bytes, os.PathLike)) else [paths]
            indexes = list(index) if index is not None else [None] * len(parts)
            if len(indexes) != len(parts):
                raise UsageError(f"index: {len(indexes)} entries for {len(parts)} aligned datasets")
            self._parts = [Dataset(part, index=part_index, cache_dir=cache_dir, progress=progress, dtype=dtype,
                                   **options) for part, part_index in zip(parts, indexes)]
            counts = [len(part) for part in self._parts]
            for part, count in zip(self._parts[1:], counts[1:]):
                if count != counts[0]:
                    raise Error(f"aligned inputs differ in record count: '{self._parts[0].files[0]}' holds "
                                f"{counts[0]} records, '{part.files[0]}' holds {count}")
            self._length = counts[0] if counts else 0
            return
        self._parts = None
        files = _native.expand_paths(_paths(paths, "paths"))
        indexes = _find_indexes(files, options, index, cache_dir or default_cache_dir(), progress)
        self._open(files, indexes, options, dtype, check_fingerprints=True)

    def _open(self, files, indexes, options, dtype, check_fingerprints):
        self._files, self._indexes, self._options, self._dtype = files, indexes, options, dtype
        self._records = _native.IndexedRecords(files, indexes, options, check_fingerprints)
        self._length = len(self._records)
        first = self._records.inputs()[0]
        self._format, self._header = first["format"], first["header"]
        self._row_bytes = first["record_size"]
        self._row_dtype = self._row_shape = None
        if self._format == "npy":
            self._row_dtype, self._row_shape = _npy_rows(self._header)
        elif dtype is not None:
            self._row_dtype = np.dtype(dtype)
            if self._row_bytes == 0 or self._row_bytes % self._row_dtype.itemsize:
                raise UsageError(f"dtype {self._row_dtype}: records of {self._row_bytes} bytes are not a whole "
                                 "number of its items (dtype= is for fixed-size records)")
            self._row_shape = (self._row_bytes // self._row_dtype.itemsize,)

    # --- what it is ---
    def __len__(self):
        return self._length

    @property
    def files(self):
        """The input files, directories expanded, in order."""
        return [f for part in self._parts for f in part.files] if self._parts is not None else list(self._files)

    @property
    def format(self):
        """How the records were read: lines, csv, tsv, jsonl, tfrecord, tar, npy or binary."""
        return tuple(p.format for p in self._parts) if self._parts is not None else self._format

    @property
    def header(self):
        """The bytes before the first file's records: CSV/TSV header lines, a .npy header."""
        return tuple(p.header for p in self._parts) if self._parts is not None else self._header

    def __repr__(self):
        return f"extshuffle.Dataset({len(self)} records of {self.format} in {len(self.files)} files)"

    # --- reading ---
    def __getitem__(self, key):
        if isinstance(key, slice):
            return self.get_batch(np.arange(*key.indices(len(self)), dtype=np.int64))
        if isinstance(key, (list, tuple)) or (isinstance(key, np.ndarray) and key.ndim > 0):
            return self.get_batch(key)
        return self.get_batch([operator.index(key)])[0]

    def __getitems__(self, indices):
        """A batch of records, in the order asked (torch's DataLoader calls it
        for a batch where it exists)."""
        return self.get_batch(indices)

    def get_batch(self, indices):
        """Records `indices`, read together: sorted by file and offset,
        neighbours in one read, with the GIL released. A list; for .npy rows
        and fixed-size records with dtype= (and no transform) one numpy array
        of the rows, (len(indices),) + the row's shape, which a DataLoader
        hands on as one tensor instead of a tensor a row. With torch 1.13,
        whose DataLoader reads one index at a time, give it a BatchSampler as
        sampler and batch_size=None: each batch then comes here
        (docs/python.md, "Reading records in the order")."""
        if self._parts is not None:
            records = [tuple(row) for row in zip(*(part.get_batch(indices) for part in self._parts))]
        else:
            records = self._read(_indices(indices, len(self)))
        if self.transform is not None:
            records = [self.transform(record) for record in records]
        return records

    def _read(self, indices):
        if self._row_dtype is not None:
            # One array, the batch's rows in order: a row an array would cost
            # a Python object a row here and a pickle a row to a DataLoader.
            rows = self._records.read_rows(indices, self._row_bytes)
            return rows.view(self._row_dtype).reshape((len(indices),) + self._row_shape)
        records = self._records.read(indices)
        if self._format == "tar":
            return [_tar_sample(key, members) for key, members in records]
        return records

    def raw(self, i):
        """Record i's bytes as the tool writes them: a line with its terminator,
        a whole TFRecord frame, a tar sample's headers and data, a row."""
        return self.raw_batch([operator.index(i)])[0]

    def raw_batch(self, indices):
        """raw() of each of `indices`, read together as get_batch() reads."""
        if self._parts is not None:
            return [tuple(row) for row in zip(*(part.raw_batch(indices) for part in self._parts))]
        return self._records.read(_indices(indices, len(self)), raw=True)

    def __iter__(self):
        for first in range(0, len(self), 1024):
            yield from self.get_batch(np.arange(first, min(first + 1024, len(self)), dtype=np.uint64))

    # --- to data loader workers: by path ---
    def __reduce__(self):
        if self._parts is not None:
            return (_rebuild_aligned, (self._parts, self.transform, self._length))
        return (_rebuild, (self._files, self._indexes, self._options, self._dtype, self.transform))


def _npy_rows(header):
    """(dtype, shape of a row) of a .npy header, as numpy reads it."""
    stream = io.BytesIO(header)
    version = np.lib.format.read_magic(stream)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(stream)
    elif version == (2, 0):
        shape, _, dtype = np.lib.format.read_array_header_2_0(stream)
    else:  # 3.0 (UTF-8 field names): numpy reads it only through its private reader
        shape, _, dtype = np.lib.format._read_array_header(stream, version)
    return dtype, tuple(shape[1:])


def _rebuild(files, indexes, options, dtype, transform):
    # The parent checked the files' fingerprints; the worker checks each
    # file's size and time as it opens it.
    dataset = Dataset.__new__(Dataset)
    dataset.transform = transform
    dataset._parts = None
    dataset._open(files, indexes, options, dtype, check_fingerprints=False)
    return dataset


def _rebuild_aligned(parts, transform, length):
    dataset = Dataset.__new__(Dataset)
    dataset.transform, dataset._parts, dataset._length = transform, parts, length
    return dataset
