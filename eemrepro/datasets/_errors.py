"""Errors of the data layer; each message names the file, URL or key at fault."""


class DatasetError(Exception):
    """Base class of every data set error."""


class RegistryError(DatasetError):
    """The registry file itself is malformed."""


class UnknownDatasetError(DatasetError, KeyError):
    """A name that is not in the registry."""

    def __str__(self):  # KeyError would quote the message
        return self.args[0]


class DownloadError(DatasetError):
    """No source could deliver a file (every URL failed, or the mirror lacks it)."""


class ChecksumError(DatasetError):
    """A file's sha256 differs from the registry's."""


class DatasetParseError(DatasetError):
    """A file is truncated or garbled."""
