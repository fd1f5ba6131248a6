"""tests/parlor's fixtures: the servers are tests/servers.py's (for every folder); headless
Chromium is tests/dashboard's, imported here rather than copied."""

from tests.dashboard.conftest import browser  # noqa: F401 (a fixture: pytest finds it here)
