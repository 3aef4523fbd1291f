"""The exceptions harbor raises.

Every one derives from :class:`HarborError` and from the built-in class Python code
expects for its kind, so ``except ValueError`` catches bad input and ``except
RuntimeError`` a run that failed. Messages are the library's: the field (its config path,
``system.R``), the violated property and the measured value.
"""


class HarborError(Exception):
    """Base of every exception harbor raises."""


class ConfigError(HarborError, ValueError):
    """A config, an argument or a value that violates a documented property.

    Also a config that cannot be read as the expected structure (an unknown key, a value
    of the wrong type). The message names the field by its config path.
    """


class ArrayError(ConfigError):
    """A NumPy array harbor cannot take as a config value (a complex, object, string or
    extended-precision dtype); arrays of the wrong shape are refused by the field they
    fill, as :class:`ConfigError`."""


class NumericalError(HarborError, RuntimeError):
    """A computation that failed although its input was valid: members that became
    non-finite (without ``keep_nonfinite=True``), a singular stage matrix, every
    Monte-Carlo candidate overflowing."""


class DeviceError(HarborError, RuntimeError):
    """The GPU could not run: no adapter for ``backend="gpu"``, a failed device request,
    a lost device."""


class FileError(HarborError, OSError):
    """A file that could not be read or written (Python's convention for I/O is
    ``OSError``)."""


class InternalError(HarborError, RuntimeError):
    """A bug in harbor (a Rust panic), never a reaction to input; please report it."""


__all__ = [
    "HarborError",
    "ConfigError",
    "ArrayError",
    "NumericalError",
    "DeviceError",
    "FileError",
    "InternalError",
]
