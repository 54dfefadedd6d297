"""shuffle(): the extshuffle tool's Job run by the library from Python.

shuffle() is the tool: its arguments become the words of an extshuffle
command line (the keywords its long options), which the CLI's own parser,
make_job and error mapping take (python/src/shuffle_bindings.cpp), so that
every value gets the tool's check and every failure the tool's message,
the options named as the caller named them (memory=, not --memory).
The Job runs in a child interpreter started for it (this package's
_child_main, the library called directly: no program started). The
library's SIGINT handling then does for Ctrl-C what it does for the tool
(scratch and temporary outputs removed, the destination untouched), and
this process raises KeyboardInterrupt with its own signal handlers left
alone. The child dies with its caller (PR_SET_PDEATHSIG). The caller waits
in os.read, with the GIL released. A fresh interpreter, not fork(): a
forked copy of a process whose OpenMP threads have run (torch's, after any
parallel tensor operation) hangs in its first parallel region, and the
library's walk has many."""

import operator
import os
import pickle
import signal
import struct
import subprocess
import sys

from . import _native
from ._errors import UsageError, error_for

_PROGRESS = struct.Struct("=cQQ")  # b"P", done bytes, total bytes: what _native writes


# The keywords shuffle() takes: the tool's long options with "_" for "-",
# as the CLI's table of options says (tools/cli/option_table.cpp, whose
# parser and make_job check every value). Flags are given as True; a number
# given for a size is bytes (the command line's bare number for --memory is
# KiB).
_KEYWORDS = _native.option_keywords()
_FLAGS = frozenset(name for name, kind in _KEYWORDS.items() if kind == "flag")
_SIZES = frozenset(name for name, kind in _KEYWORDS.items() if kind == "size")


def _paths(value, what):
    """File names as the command line takes them: bytes (os.fsencode), so
    that names Python holds as bytes or undecodable str reach the tool intact."""
    if isinstance(value, (str, bytes, os.PathLike)):
        return [os.fsencode(value)]
    try:
        paths = [os.fsencode(v) for v in value]
    except TypeError:
        raise UsageError(f"invalid {what}=: expected a path or a list of paths") from None
    if not paths:
        raise UsageError(f"invalid {what}=[]: an empty list names no file (give None for standard "
                         f"{'input' if what == 'inputs' else 'output'})")
    return paths


def _text(value):
    """A value as the command line's word: names and text as bytes
    (os.fsencode), integers (int, numpy's) as their digits, anything else
    as str() gives it, for the parser to accept or refuse."""
    if isinstance(value, (str, bytes, os.PathLike)):
        return os.fsencode(value)
    if not isinstance(value, bool):
        try:
            return str(operator.index(value)).encode()
        except TypeError:
            pass
    return str(value).encode()


def _option_words(name, value):
    """`name=value` as the long option the CLI's parser takes: no word when
    absent, "--name=VALUE" (a value that begins with "-" stays a value), or
    "--name" and "" for an empty value (CLI11 would take the word after a
    bare "--name=" as its value)."""
    option = b"--" + name.replace("_", "-").encode()
    if value is None or (value is False and (name in _FLAGS or name == "header")):
        return []
    if value is True and name in _FLAGS:
        return [option]
    if value is True and name == "header":
        return [option + b"=1"]  # a bare --header would take a digit operand after it as its N
    word = _text(value)
    if name in _SIZES and not isinstance(value, bool) and word.isdigit():
        word += b"b"
    return _value_words(option, word)


def _value_words(option, word):
    return [option + b"=" + word] if word else [option, word]


def _command_line(inputs, output, seed, options):
    """The words after the program's name of the extshuffle command that
    shuffle() runs: the options, one --output per output, then the inputs
    after "--" (a file named "-x" stays a file)."""
    words = _value_words(b"--seed", _text(seed))
    for name, value in options.items():
        if name not in _KEYWORDS:
            raise UsageError(f"{name}=: unknown option (see help(extshuffle.shuffle))")
        words += _option_words(name, value)
    for path in [b"-"] if output is None else _paths(output, "output"):
        words += _value_words(b"--output", path)
    return words + [b"--"] + ([] if inputs is None else _paths(inputs, "inputs"))


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


def _write_outcome(write_fd, outcome):
    data = pickle.dumps(outcome)
    os.write(write_fd, b"R" + struct.pack("=Q", len(data)))
    view = memoryview(data)
    while view:
        view = view[os.write(write_fd, view):]


def _child(write_fd, words):
    """The child: runs the Job and writes its outcome, a failure's message
    included, whatever raised it; never returns."""
    status = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # the library's handler replaces it once files exist
        try:
            outcome = _native.run_job(words, write_fd)
        except Exception as error:  # not the tool's: still the caller's to read
            outcome = (1, f"internal error: {type(error).__name__}: {error}")
        _write_outcome(write_fd, outcome)
        status = 0
    finally:
        os._exit(status)


def _child_main():
    """The child interpreter's entry: the arguments arrive pickled on a pipe
    of their own (standard input stays the caller's: an input may be "-").
    It dies with its caller (SIGTERM, the tool's cleanup), and ends at once
    when the caller ended before that could be asked."""
    write_fd, arguments_fd, caller = (int(a) for a in sys.argv[1:4])
    if not _native.end_with_parent(caller):
        os._exit(1)
    with os.fdopen(arguments_fd, "rb") as arguments:
        try:
            words = pickle.load(arguments)
        except EOFError:
            os._exit(1)  # the caller ended before it sent them
    _child(write_fd, words)


def _start_child(write_fd, arguments):
    """Starts the child interpreter that runs the Job; returns its Popen."""
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    arguments_read, arguments_write = os.pipe()
    try:
        child = subprocess.Popen(
            [sys.executable, "-c", "from extshuffle._shuffle import _child_main; _child_main()",
             str(write_fd), str(arguments_read), str(os.getpid())],
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


def _ending(status):
    """How the child ended, as Popen's returncode says it."""
    if status >= 0:
        return f"exit status {status}"
    try:
        return f"killed by {signal.Signals(-status).name}"
    except ValueError:
        return f"killed by signal {-status}"


def shuffle(inputs, output=None, *, seed, progress=None, **options):
    """Shuffle `inputs` (a path or a list of paths, read as one dataset) into
    `output` as `extshuffle INPUT... -o OUTPUT --seed SEED` does; `output` a
    list of paths shuffles aligned inputs, one each, by one permutation.
    `options` are the tool's long options with "_" for "-" (memory,
    threads, tmpdir, format, record_size, header, shards, shard_size, split,
    manifest, verify, clean, dry_run, checkpoint, ...), flags given as True; a number
    given for a size is bytes. File names are str, bytes or os.PathLike. `progress`: a callable (done_bytes, total_bytes), False for none,
    or None for a tqdm bar when tqdm is installed. Returns the RESULT fields
    of the first dataset (records, bytes, levels, passes, seconds, ...) with
    its inputs and outputs, and "datasets": one such dict per dataset.
    Raises extshuffle.Error (UsageError for the tool's exit code 2)."""
    words = _command_line(inputs, output, seed, options)
    report, bar = _progress_reporter(progress)
    read_fd, write_fd = os.pipe()
    child = None
    try:
        child = _start_child(write_fd, words)
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
        raise error_for(1, f"run: ended without a result ({_ending(status)})")
    code, value = outcome
    if code != 0:
        raise error_for(code, value)
    result = dict(value[0])
    result["datasets"] = value
    return result
