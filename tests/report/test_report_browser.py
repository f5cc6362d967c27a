"""The HTML report in a real browser: headless Chromium loads it, lays out its tables and decodes its images."""

import shutil
import subprocess

import numpy as np
import pytest

from dpaudit.report import write_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium not installed (Debian: apt-get install -y chromium)"
)

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Appended to a copy of the page only: after load, record what the browser actually rendered.
PROBE = """<script>
window.addEventListener('load', () => {
  const imgs = [...document.images].map(i => (i.complete && i.naturalWidth > 0) ? 1 : 0);
  const tables = [...document.querySelectorAll('table.claims')];
  const probe = document.createElement('pre');
  probe.id = 'probe';
  probe.textContent = JSON.stringify({imgs, tables: tables.map(t => [t.rows.length, t.offsetHeight])});
  document.body.appendChild(probe);
});
</script></body>"""


def _chromium(tmp_path, *args):
    profile = tmp_path / "profile"
    cmd = [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_report_renders_tables_and_images_in_chromium(tmp_path, sample_report):
    import json
    import re

    write_report(sample_report, tmp_path / "out")
    page = (tmp_path / "out" / "report.html").read_text()
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", PROBE))
    dom = _chromium(tmp_path, "--virtual-time-budget=10000", "--dump-dom", probed.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom.stdout, re.S)
    assert found, "the page's load handler did not run"
    probe = json.loads(found.group(1).replace("&quot;", '"'))
    embedded = page.count("<img ")
    assert embedded >= 5  # regret, trade-off, tightness plots ... and the pin intervals
    assert len(probe["imgs"]) == embedded and all(probe["imgs"]), probe  # every embedded PNG decoded
    assert len(probe["tables"]) == 3
    assert all(rows >= 2 and height > 20 for rows, height in probe["tables"]), probe  # laid out with rows

    shot = tmp_path / "shot.png"
    res = _chromium(
        tmp_path, "--window-size=1200,1600", f"--screenshot={shot}", (tmp_path / "out" / "report.html").as_uri()
    )
    assert res.returncode == 0 and shot.is_file(), res.stderr[-2000:]
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[:2] == (1600, 1200)
    assert np.std(pixels[..., :3]) > 0.05  # not a blank page
