"""The one way joint and file names from input files reach file names, HTML and figure labels.

Names come from BVH files and limits files, so they are untrusted: ``../../x``, ``<a href=..>``,
``$\\invalid$`` (matplotlib mathtext) are all legal joint names.
"""

from __future__ import annotations

import hashlib
import html
import re

__all__ = ["safe_filename", "html_text", "plot_label"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_filename(name: str, max_len: int = 80) -> str:
    """A file-name part made from ``name``: only ``A-Z a-z 0-9 . _ -``, no leading dot, at most
    ``max_len`` characters. Names that had to change get a short hash of the original, so two
    different names never map to the same file."""
    s = _UNSAFE.sub("_", name).lstrip(".")
    if s == name and s and len(s) <= max_len:
        return s
    tag = hashlib.sha1(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    s = s[: max(1, max_len - 9)].lstrip("._").rstrip("_") or "joint"
    return f"{s}_{tag}"


def html_text(name: str) -> str:
    """``name`` as HTML text (plotly labels, dropdowns, hover text): markup is shown, not run."""
    return html.escape(str(name), quote=True)


def plot_label(name: str) -> str:
    """``name`` for a matplotlib title or label: ``$`` no longer starts mathtext."""
    return str(name).replace("$", r"\$")
