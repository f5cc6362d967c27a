"""The documentation site builds with `mkdocs build --strict`, every internal link of it leads to a page and
anchor that exist, and its pages render in a browser.

Skipped without the `docs` extra (mkdocs, mkdocs-material, mkdocstrings); the browser checks are skipped
without Chromium at /usr/bin/chromium (or `chromium` on PATH). The build is deterministic, so none of these
checks is statistical.
"""

from __future__ import annotations

import html.parser
import os
import pathlib
import shutil
import subprocess
import sys
import urllib.parse

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BROWSER_PAGES = {
    "getting-started.html": "Getting started",
    "tutorials/ci.html": "Auditing your own mechanism or bandit in CI",
}
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]


class _Page(html.parser.HTMLParser):
    """The hrefs and srcs a page links to, the ids it defines, and the text of its first h1."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.h1: str | None = None
        self._in_h1 = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        for key in ("href", "src"):
            if attrs.get(key) and not (tag == "link" and attrs.get("rel") == "canonical"):
                self.links.append(attrs[key])
        if tag == "h1" and self.h1 is None:
            self._in_h1, self.h1 = True, ""

    def handle_endtag(self, tag):
        if tag == "h1":
            self._in_h1 = False

    def handle_data(self, data):
        if self._in_h1:
            self.h1 += data


def parse(path: pathlib.Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def broken_links(site: pathlib.Path) -> list[str]:
    """Every internal href/src of the site's pages whose file, or whose #anchor in that file, does not exist."""
    pages = {p: parse(p) for p in site.rglob("*.html")}
    bad = []
    for path, page in pages.items():
        for link in page.links:
            url = urllib.parse.urlsplit(link)
            if url.scheme or url.netloc or link.startswith("//"):
                continue  # outside the site: not followed
            where = site if url.path.startswith("/") else path.parent  # "/x": from the site's root (404.html)
            target = (where / urllib.parse.unquote(url.path).lstrip("/")).resolve() if url.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                bad.append(f"{path.relative_to(site)}: {link} (no such file)")
            elif url.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else parse(target).ids
                if urllib.parse.unquote(url.fragment) not in ids:
                    bad.append(f"{path.relative_to(site)}: {link} (no such anchor)")
    return bad


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> pathlib.Path:
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
        pytest.importorskip(module, reason=f'the site needs the docs extra (pip install ".[docs]"): no {module}')
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    res = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert res.returncode == 0, f"mkdocs build --strict failed:\n{res.stdout}\n{res.stderr}"
    return out


def test_the_site_builds_strict_with_every_page(site):
    for page in (
        "index.html",
        "getting-started.html",
        "tutorials/budget.html",
        "tutorials/ci.html",
        "tutorials/report.html",
        "concepts/auditor.html",
        "concepts/glossary.html",
        "papers.html",
        "reference/index.html",
        "reference/accounting.html",
        "reference/algorithms.html",
    ):
        assert (site / page).is_file(), page


def test_no_internal_link_is_broken(site):
    assert broken_links(site) == []


def test_the_link_check_finds_a_broken_link(tmp_path):  # the twin: the check above can fail
    (tmp_path / "a.html").write_text(
        '<h1 id="top">A</h1><a href="b.html#there">b</a><a href="a.html#top">me</a>'
        '<a href="https://example.org/x">out</a><a href="c.html">c</a><a href="/b.html">'
    )
    (tmp_path / "b.html").write_text('<h1 id="here">B</h1>')
    assert broken_links(tmp_path) == ["a.html: b.html#there (no such anchor)", "a.html: c.html (no such file)"]


def test_the_api_reference_documents_every_front_door_name(site):
    import dpaudit

    text = (site / "reference" / "index.html").read_text(encoding="utf-8")
    missing = [name for name in dpaudit.__all__ if name != "__version__" and f">{name}</code>" not in text]
    assert missing == []


def _chromium() -> str:
    found = shutil.which("chromium") or ("/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None)
    if found is None:
        pytest.skip("no Chromium (/usr/bin/chromium): the pages are not opened in a browser")
    return found


@pytest.mark.parametrize("page, title", sorted(BROWSER_PAGES.items()))
def test_the_page_renders_in_a_browser(site, page, title, tmp_path):
    chromium = _chromium()
    url = (site / page).as_uri()
    base = [chromium, *CHROMIUM_FLAGS, "--enable-logging=stderr", "--v=0"]
    dom = subprocess.run(
        [*base, f"--user-data-dir={tmp_path / 'profile-dom'}", "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    rendered = _Page()
    rendered.feed(dom.stdout)
    assert (rendered.h1 or "").replace("¶", "").strip() == title  # ¶: the heading's permalink
    assert 'class="md-nav' in dom.stdout and "md-typeset" in dom.stdout  # the theme's navigation and content
    errors = [line for line in dom.stderr.splitlines() if "CONSOLE" in line and "Uncaught" in line]
    assert errors == [], "the page's scripts failed:\n" + "\n".join(errors)
    shot = tmp_path / "page.png"
    res = subprocess.run(
        [*base, f"--user-data-dir={tmp_path / 'profile-shot'}", "--window-size=1280,1600", f"--screenshot={shot}", url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0 and shot.stat().st_size > 20_000, res.stderr[-2000:]  # a page, not a blank image
