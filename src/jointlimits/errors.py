"""Exceptions raised by jointlimits: each names what was wrong and where."""

from __future__ import annotations


class JointLimitsError(Exception):
    """Base class of every error jointlimits raises on purpose."""


class BVHError(JointLimitsError, ValueError):
    """A BVH file could not be parsed or written; `line` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None, path: str | None = None):
        self.line = line
        self.path = path
        self.reason = message
        where = ""
        if path is not None:
            where += f"{path}"
        if line is not None:
            where += f"{':' if where else 'line '}{line}"
        super().__init__(f"{where}: {message}" if where else message)


class LimitsError(JointLimitsError, ValueError):
    """A limits file or fit is invalid (corrupt, wrong schema, wrong skeleton, degenerate data)."""


class SkeletonError(JointLimitsError, ValueError):
    """A skeleton or motion is inconsistent (shapes, parents, unknown joint names)."""


class IKError(JointLimitsError, ValueError):
    """An IK problem is malformed (chain not in skeleton, zero-length bones, NaN targets)."""


class FormatError(JointLimitsError, ValueError):
    """A motion file of a non-BVH format (glTF, AMASS npz) could not be read or written."""


class QuatError(JointLimitsError, ValueError):
    """A quaternion or vector argument cannot give a rotation (zero length, NaN or infinite)."""


class MissingExtraError(JointLimitsError, ImportError):
    """A feature needs an optional package that is not installed; the message names the extra
    (``pip install 'jointlimits[EXTRA]'``) that brings it."""
