"""Every link inside a built docs site leads somewhere: each internal ``href``/``src`` of every page
names a file of the site and, with ``#anchor``, an ``id`` (or ``name``) on that page.

    python scripts/check_links.py SITE_DIR

Prints one line per broken link (page, link) and the count; exits 1 when any is broken. External
links (``http:``, ``https:``, ``mailto:``, ...) are not fetched. .ci/run runs it after
``mkdocs build``.
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for k, v in attrs:
            if v is None:
                continue
            if k in ("id", "name") and (k == "id" or tag == "a"):
                self.ids.add(v)
            elif k == "href" and tag in ("a", "link", "area") or k == "src" and tag in ("img", "script", "iframe"):
                self.links.append(v)


def _target(site: Path, page: Path, link: str) -> tuple[Path, str] | None:
    """The file and anchor ``link`` on ``page`` names; None for an external link."""
    parts = urlsplit(link)
    if parts.scheme or parts.netloc:
        return None
    path = unquote(parts.path)
    if not path:
        target = page
    elif path.startswith("/"):
        target = site / path.lstrip("/")
    else:
        target = page.parent / path
    if path.endswith("/") or target.is_dir():
        target = target / "index.html"
    return target.resolve(), unquote(parts.fragment)


def broken_links(site: Path) -> list[tuple[str, str]]:
    """(page, link) for every internal link of the site at ``site`` that leads nowhere."""
    site = site.resolve()
    pages: dict[Path, _Page] = {}
    for f in sorted(site.rglob("*.html")):
        p = _Page()
        p.feed(f.read_text(encoding="utf-8", errors="replace"))
        pages[f.resolve()] = p
    bad = []
    for f, p in pages.items():
        for link in p.links:
            t = _target(site, f, link)
            if t is None:
                continue
            target, anchor = t
            ok = target.is_file()
            if ok and anchor and target.suffix == ".html":
                ok = anchor in pages[target].ids if target in pages else False
            if not ok:
                bad.append((str(f.relative_to(site)), link))
    return bad


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: python scripts/check_links.py SITE_DIR (a built site)", file=sys.stderr)
        return 2
    bad = broken_links(Path(argv[0]))
    for page, link in bad:
        print(f"{page}: broken link {link}")
    print(f"{len(bad)} broken links")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
