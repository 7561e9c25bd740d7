"""Headless Chromium through Playwright for the browser tests (Debian's binary, no download)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import HANG_BOUND

CHROMIUM = Path("/usr/bin/chromium")
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
WIDTH = 1280
BOUND_MS = HANG_BOUND * 1000
"""Playwright's limit on each launch, navigation and action: a bound on a hang (its 30 s
default is a margin that a busy machine can reach)."""
ARTIFACTS_ENV = "OCCUBENCH_ARTIFACTS"
"""Folder where the browser tests leave their screenshots, when set."""

needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian's chromium is not installed at /usr/bin/chromium"
)


@contextmanager
def chromium() -> Iterator[object]:
    """A Playwright browser on Debian's chromium (skips without Playwright)."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=FLAGS, timeout=BOUND_MS
        )
        try:
            yield browser
        finally:
            browser.close()


def screenshot(page, name: str) -> None:
    """Save a full-page screenshot under $OCCUBENCH_ARTIFACTS (nothing when it is unset)."""
    folder = os.environ.get(ARTIFACTS_ENV)
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / name), full_page=True)


CONTRAST_JS = """
() => {
  const rgb = s => s.match(/[\\d.]+/g).slice(0, 3).map(Number).map(c => c / 255);
  const linear = v => v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  const lum = c => {
    const [r, g, b] = c.map(linear);
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => {
    const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05);
  };
  const hasText = el => [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
  const out = [];
  for (const cell of document.querySelectorAll('td[style*="background"]')) {
    const bg = rgb(getComputedStyle(cell).backgroundColor);
    for (const el of [cell, ...cell.querySelectorAll("*")]) {
      if (hasText(el)) out.push(ratio(rgb(getComputedStyle(el).color), bg));
    }
  }
  return out;
}
"""
"""Contrast ratio (WCAG 2) of every text on a coloured table cell, as the browser draws it."""
