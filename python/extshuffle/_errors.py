"""The errors of shuffle(): the tool's one-line message and exit code."""


class Error(Exception):
    """A run that failed as the extshuffle tool would, exit code 1 (or 2 for
    UsageError); str() is the tool's message without "extshuffle: "."""

    def __init__(self, message, exit_code=1):
        super().__init__(message)
        self.exit_code = exit_code


class UsageError(Error):
    """Bad arguments the caller can fix (the tool's exit code 2)."""

    def __init__(self, message, exit_code=2):
        super().__init__(message, exit_code)


def error_for(exit_code, message):
    return UsageError(message) if exit_code == 2 else Error(message, exit_code)
