"""The trace's errors: below every trace module that raises them (and the CLI's error
boundary, which maps them to one line and exit status 2)."""


class TraceFormatError(ValueError):
    """A batch or event that does not follow the schema."""


class TraceFileError(TraceFormatError):
    """A trace file that cannot be continued as it is, as one line: ``"<path>:<line>: <what
    is wrong>"``. Raised before the file is changed (nothing is cut, nothing appended)."""
