"""Dashboard fixtures: a real Mosquitto, and headless Chromium driven by Selenium.

Without Mosquitto, or Chromium and its driver, the tests that need them skip, except
under CI (``CI=true``), where they fail: CI must test the page in a real browser.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import Broker, running_broker


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Broker]:
    """A running anonymous Mosquitto on 127.0.0.1, stopped after the test."""
    yield from running_broker(tmp_path)


def _missing(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI must run the dashboard's browser test")
    pytest.skip(reason)


@pytest.fixture
def browser() -> Iterator[Any]:
    """Headless Chromium (Debian's chromium and chromium-driver), closed after the test.

    The driver's path is given explicitly, so Selenium Manager never tries to download one.
    """
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        _missing(
            "chromium or chromedriver not installed (apt-get install chromium chromium-driver)"
        )
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _missing("selenium not installed (pip install -e '.[dev]')")
    options = webdriver.ChromeOptions()
    options.binary_location = str(chromium)
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,1200",
        "--lang=en-GB",
        "--no-first-run",
        "--disable-extensions",
    ):
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"intl.accept_languages": "en-GB,en"})
    driver = webdriver.Chrome(service=Service(executable_path=str(driver_path)), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
