"""Headless Chromium through selenium, for the report's browser tests.

Debian's ``chromium`` and ``chromium-driver`` packages provide /usr/bin/chromium and
/usr/bin/chromedriver; tests skip with :data:`SKIP_REASON` where they are absent.

Also a script: ``python tests/chromium.py REPORT.html OUT.png [WIDTH HEIGHT]`` saves a screenshot
of the top of a report (what docs/report-screenshot.png is made with).
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import tempfile
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SKIP_REASON = (f"headless Chromium not installed ({CHROMIUM} / {CHROMEDRIVER} missing): "
               "apt-get install -y chromium chromium-driver")
LAPTOP = (1366, 900)
PHONE = (390, 844)


def available() -> bool:
    return CHROMIUM.exists() and CHROMEDRIVER.exists()


@contextlib.contextmanager
def browser(width: int = LAPTOP[0], height: int = LAPTOP[1]):
    """A fresh headless Chromium (own profile, no background traffic) logging console + network."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="audit-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", "--hide-scrollbars",
                f"--window-size={width},{height}", f"--user-data-dir={profile}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        set_viewport(driver, width, height)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def set_viewport(driver, width: int, height: int, *, mobile: bool | None = None) -> None:
    """Emulate a viewport of exactly ``width`` x ``height`` CSS pixels (a phone when narrow)."""
    mobile = width < 600 if mobile is None else mobile
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1,
                            "mobile": mobile})


def requested_urls(driver) -> list[str]:
    """Every URL the page asked for, from the DevTools performance log and the Performance API."""
    import json

    urls = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
    urls += driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)")
    return urls


def screenshot(report: str | Path, png: str | Path, width: int = LAPTOP[0],
               height: int = LAPTOP[1]) -> Path:
    png = Path(png)
    png.parent.mkdir(parents=True, exist_ok=True)
    with browser(width, height) as driver:
        driver.get(Path(report).resolve().as_uri())
        driver.save_screenshot(str(png))
    return png


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) not in (2, 4):
        sys.exit(__doc__)
    size = tuple(int(a) for a in args[2:]) or LAPTOP
    print(screenshot(args[0], args[1], *size))
