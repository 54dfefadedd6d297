"""shuffle(): the extshuffle tool's Job run by the library from Python.

The Job runs in a child interpreter started for it (this package's
_child_main, the library called directly: no program started, no command
line parsed). The library's SIGINT handling then does for Ctrl-C what it
does for the tool (scratch and temporary outputs removed, the destination
untouched), and this process raises KeyboardInterrupt with its own signal
handlers left alone. The caller waits in os.read, with the GIL released.
A fresh interpreter, not fork(): a forked copy of a process whose OpenMP
threads have run (torch's, after any parallel tensor operation) hangs in
its first parallel region, and the library's walk has many."""

import os
import pickle
import signal
import struct
import subprocess
import sys

from . import _native
from ._errors import UsageError, error_for

_PROGRESS = struct.Struct("=cQQ")  # b"P", done bytes, total bytes: what _native writes


def _paths(value, what):
    if isinstance(value, (str, bytes, os.PathLike)):
        return [os.fsdecode(value)]
    try:
        return [os.fsdecode(v) for v in value]
    except TypeError:
        raise UsageError(f"invalid {what}: expected a path or a list of paths") from None


def _progress_reporter(progress):
    """The callback for (done, total) bytes: `progress`, else tqdm when installed, else none."""
    if progress is False:
        return None, None
    if progress is not None:
        return progress, None
    try:
        from tqdm import tqdm
    except ImportError:
        return None, None
    bars = []  # made at the first report: a run that fails at once shows none

    def report(done, total):
        if not bars:
            bars.append(tqdm(total=total, unit="B", unit_scale=True, desc="extshuffle", leave=False))
        bars[0].total = total
        bars[0].n = min(done, total)
        bars[0].refresh()
    return report, bars


def _child(write_fd, inputs, outputs, seed, options):
    """The forked child: runs the Job and writes its outcome; never returns."""
    status = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # the library's handler replaces it once files exist
        outcome = _native.run_job(inputs, outputs, seed, options, write_fd)
        data = pickle.dumps(outcome)
        os.write(write_fd, b"R" + struct.pack("=Q", len(data)))
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view):]
        status = 0
    finally:
        os._exit(status)


def _child_main():
    """The child interpreter's entry: the arguments arrive pickled on a pipe
    of their own (standard input stays the caller's: an input may be "-")."""
    write_fd, arguments_fd = int(sys.argv[1]), int(sys.argv[2])
    with os.fdopen(arguments_fd, "rb") as arguments:
        _child(write_fd, *pickle.load(arguments))


def _start_child(write_fd, arguments):
    """Starts the child interpreter that runs the Job; returns its Popen."""
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    arguments_read, arguments_write = os.pipe()
    try:
        child = subprocess.Popen(
            [sys.executable, "-c", "from extshuffle._shuffle import _child_main; _child_main()",
             str(write_fd), str(arguments_read)],
            pass_fds=(write_fd, arguments_read), env=env)
    finally:
        os.close(arguments_read)
    with os.fdopen(arguments_write, "wb") as pipe:
        try:
            pipe.write(pickle.dumps(arguments))
        except BrokenPipeError:
            pass  # the child ended at once; its status says why
    return child


def _read_outcome(read_fd, report):
    """Progress records until the outcome; None if the child ended without one."""
    buffer = b""
    while True:
        chunk = os.read(read_fd, 1 << 16)
        if not chunk:
            return None
        buffer += chunk
        while buffer[:1] == b"P" and len(buffer) >= _PROGRESS.size:
            _, done, total = _PROGRESS.unpack_from(buffer)
            buffer = buffer[_PROGRESS.size:]
            if report is not None:
                report(done, total)
        if buffer[:1] == b"R" and len(buffer) >= 9:
            (length,) = struct.unpack_from("=Q", buffer, 1)
            while len(buffer) < 9 + length:
                chunk = os.read(read_fd, 1 << 20)
                if not chunk:
                    return None
                buffer += chunk
            return pickle.loads(buffer[9:9 + length])


def shuffle(inputs, output=None, *, seed, progress=None, **options):
    """Shuffle `inputs` (a path or a list of paths, read as one dataset) into
    `output` as `extshuffle INPUT... -o OUTPUT --seed SEED` does; `output` a
    list of paths shuffles aligned inputs, one each, by one permutation.
    `options` are the tool's long options with "_" for "-" (memory,
    threads, tmpdir, format, record_size, header, shards, shard_size, split,
    manifest, verify, clean, dry_run, ...); a number given for a size is
    bytes. `progress`: a callable (done_bytes, total_bytes), False for none,
    or None for a tqdm bar when tqdm is installed. Returns the RESULT fields
    of the first dataset (records, bytes, levels, passes, seconds, ...) with
    its inputs and outputs, and "datasets": one such dict per dataset.
    Raises extshuffle.Error (UsageError for the tool's exit code 2)."""
    seed = int(seed)
    if not 0 <= seed < 1 << 64:
        raise UsageError(f"invalid seed '{seed}': expected an unsigned 64-bit number")
    input_paths = [] if inputs is None else _paths(inputs, "inputs")
    output_paths = ["-"] if output is None else _paths(output, "output")
    report, bar = _progress_reporter(progress)
    read_fd, write_fd = os.pipe()
    child = None
    try:
        child = _start_child(write_fd, (input_paths, output_paths, str(seed), options))
        os.close(write_fd)
        write_fd = -1
        try:
            outcome = _read_outcome(read_fd, report)
        except BaseException:
            # Ctrl-C (or a callback's error): the child stops as on SIGINT,
            # removing what it wrote; then the exception goes on.
            child.send_signal(signal.SIGINT)
            child.wait()
            raise
        status = child.wait()
    finally:
        os.close(read_fd)
        if write_fd >= 0:
            os.close(write_fd)
        for each in bar or []:
            each.close()
    if outcome is None:
        if status == -signal.SIGINT:
            raise KeyboardInterrupt
        raise error_for(1, f"run: ended without a result (exit status {status})")
    code, value = outcome
    if code != 0:
        raise error_for(code, value)
    result = dict(value[0])
    result["datasets"] = value
    return result
