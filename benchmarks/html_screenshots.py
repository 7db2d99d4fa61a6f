"""Headless screenshots of the HTML report of real whole-model profiles, for a reader to look at.

    python benchmarks/html_screenshots.py [WIDTH]   (needs selenium, chromium, chromedriver)

Writes benchmarks/screenshots/NAME-WIDTH.png: the first screen (summary and chart) and the
kernel table's first rows, as a browser window WIDTH pixels wide (default 1400) shows them.
Beside them, h200-block-hierarchical.png is the hierarchical chart of the H200 block export:
    rooflint plot fixtures/ncu/h200-block-raw-stdout.csv --level dram,l2,l1 -o FILE.png
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from selenium import webdriver

from rooflint import pipeline, reporters

ROOT = Path(__file__).resolve().parents[1]
PROFILES = {
    "h200-train": ROOT / "fixtures" / "kineto" / "h200-train-trace.json.gz",
    "bert-small-h100": ROOT / "fixtures" / "kineto" / "tracelens-h100-bert-small-uncased.json.gz",
}


def main(width: int = 1400) -> None:
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.binary_location = shutil.which("chromium") or "chromium"
    driver = webdriver.Chrome(
        service=webdriver.ChromeService(shutil.which("chromedriver")), options=options
    )
    out = ROOT / "benchmarks" / "screenshots"
    with tempfile.TemporaryDirectory() as folder:
        for name, path in PROFILES.items():
            page = Path(folder) / f"{name}.html"
            page.write_text(reporters.render(pipeline.build([str(path)]), "html"), "utf-8")
            driver.set_window_size(width, 1000)
            driver.get(page.as_uri())
            height = driver.execute_script(
                "return document.querySelector('#kernels tbody:nth-of-type(8)')"
                ".getBoundingClientRect().bottom + 20"
            )
            driver.set_window_size(width, int(height) + 140)  # the window's frame is not page
            target = out / f"{name}-{width}.png"
            driver.save_screenshot(str(target))
            print(f"{target.relative_to(ROOT)}: {target.stat().st_size // 1024} KiB")
    driver.quit()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1400)
