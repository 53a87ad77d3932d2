"""pytest: each test gets a scratch directory as a string (`tmp`), as the
plain runner in test_golden.py gives it."""
import pytest


@pytest.fixture
def tmp(tmp_path):
    return str(tmp_path)
