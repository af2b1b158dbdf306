"""MkDocs hook: show the docstrings' Sphinx roles (``:func:`name```, ``:class:`~a.B```) as code.

The docstrings are plain prose with rst-like literals; mkdocstrings renders ``:func:`x``` as the
text ``:func:`` before ``x`` in code. This drops the role and, as Sphinx does, shows ``~a.b.C``
as ``C`` and ``.mod`` (relative to the module) as ``mod``.
"""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:mod|class|func|meth|attr|data|exc|obj):<code>(~?)\.?([^<]*)</code>")


def _code(m: re.Match) -> str:
    name = m.group(2)
    if m.group(1):
        name = name.rsplit(".", 1)[-1]
    return f"<code>{name}</code>"


def on_page_content(html, page, config, files):
    return ROLE.sub(_code, html)
