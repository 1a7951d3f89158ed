"""A report as PDF: the HTML export printed by Chromium (headless), the browser the web tests drive.

Chromium lays out every script the machine has fonts for (CJK through fonts-noto-cjk, Arabic and Hebrew
right to left with shaping), breaks long tables across pages, and turns each `#ref-n` link into a PDF link
annotation to that spot, which a lighter HTML-to-PDF library does not all do.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from cluster.export.document import ExportError

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
PRINT_TIMEOUT_S = 180.0


def find_chromium() -> str:
    """The Chromium to print with: $RAYSTORM_CHROMIUM, else the first of CHROMIUM_NAMES on PATH."""
    given = os.environ.get("RAYSTORM_CHROMIUM")
    if given:
        if not (Path(given).is_file() and os.access(given, os.X_OK)):
            raise ExportError(f"RAYSTORM_CHROMIUM={given} is not an executable file")
        return given
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    raise ExportError("PDF export needs Chromium and none is on PATH: install it (Debian: `apt-get install "
                      "chromium fonts-noto-cjk`) or set RAYSTORM_CHROMIUM to its executable")


def print_pdf(html_text: str, out: Path, timeout: float = PRINT_TIMEOUT_S) -> Path:
    """`html_text` printed to `out` by headless Chromium, with its own throwaway profile (two exports at
    once never share one) and no network: the page is self-contained."""
    chromium = find_chromium()
    with tempfile.TemporaryDirectory(prefix="raystorm-pdf-") as tmp:
        page = Path(tmp) / "report.html"
        page.write_text(html_text, encoding="utf-8")
        target = Path(tmp) / "report.pdf"
        command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                   "--disable-background-networking", "--disable-component-update", "--disable-sync",
                   "--disable-extensions", "--no-default-browser-check", f"--user-data-dir={Path(tmp) / 'profile'}",
                   "--no-pdf-header-footer", "--generate-pdf-document-outline", f"--print-to-pdf={target}",
                   page.as_uri()]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise ExportError(f"Chromium did not finish printing the PDF in {timeout:.0f} s") from None
        if not target.is_file() or target.stat().st_size == 0:
            tail = (done.stderr or done.stdout or "").strip().splitlines()[-3:]
            raise ExportError(f"Chromium ({chromium}) wrote no PDF (exit {done.returncode}): {' | '.join(tail)}")
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(target), out)
    return out
