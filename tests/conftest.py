import pytest


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path):
    """Every test writes puzzle assets to its own folder."""
    settings.MEDIA_ROOT = tmp_path / "media"
