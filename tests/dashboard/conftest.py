"""Dashboard fixtures: a real Mosquitto, and headless Chromium driven by Selenium.

Without Mosquitto, or Chromium and its driver, the tests that need them skip, except
under CI (``CI=true``), where they fail naming the install line: CI must test the page in
a real browser.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import Broker, require_chromium, running_broker


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Broker]:
    """A running anonymous Mosquitto on 127.0.0.1, stopped after the test."""
    yield from running_broker(tmp_path)


@pytest.fixture
def browser() -> Iterator[Any]:
    """Headless Chromium (Debian's chromium and chromium-driver), closed after the test.

    The driver's path is given explicitly, so Selenium Manager never tries to download one.
    """
    chromium, driver_path = require_chromium()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
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
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
