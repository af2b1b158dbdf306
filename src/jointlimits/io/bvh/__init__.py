"""Lossless BVH reading and writing.

``load`` accepts any per-joint channel layout (rotation orders mixed per joint, position channels
anywhere in the list and in any order, 1 to 6 channels, position channels on non-root joints),
CRLF/LF, tabs, blank lines and exponents, and raises :class:`~jointlimits.errors.BVHError` with
the line number on malformed input. ``save`` writes back the same hierarchy and channel layout;
rotations that were not changed since loading are written with the exact values read.

A loaded clip remembers where its text came from (:class:`BVHSource`: the file, or the string
given to ``loads``, and where each frame's row is). Saving it again writes every unchanged value
with its original token, the original header where the hierarchy is unchanged, and the file's
line endings; changed values are written in the file's number style (fixed notation with at
least its number of decimals, as many more as the value needs to read back exactly). Euler
angles of changed rotations are the equivalent nearest the original angles of that frame.

The package: :mod:`._parse` (header tokens, hierarchy and frame rows to values), :mod:`._source`
(what a loaded clip keeps of its text), :mod:`._read` (:func:`load`, :func:`loads`) and
:mod:`._write` (:func:`save`, :func:`dumps`, :func:`channel_data`).
"""

from __future__ import annotations

# the names this module had before it became a package stay importable from it
from ...errors import BVHError  # noqa: F401
from ...motion.skeleton import Motion, Skeleton  # noqa: F401
from ._parse import CHANNEL_NAMES, MIN_FRAME_TIME  # noqa: F401
from ._read import load, loads
from ._source import BVHSource
from ._write import _format_rows, channel_data, dumps, save, save_blocks  # noqa: F401

__all__ = ["load", "loads", "save", "save_blocks", "dumps", "channel_data", "CHANNEL_NAMES", "BVHSource"]
