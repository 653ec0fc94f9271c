"""The headless Debian chromium the browser tests drive (over CDP: tests/dashboard/cdp.py).

Registered as a plugin in tests/conftest.py, so the dashboard's page tests and the eval
report's share one definition; skipped with the reason when chromium is not installed.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.dashboard.cdp import CHROMIUM, Chromium


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    """One headless Debian chromium for the module's tests."""
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (`make browser` installs it)")
    browser = Chromium.launch(tmp_path_factory.mktemp("chromium-profile"))
    yield browser
    browser.close()
