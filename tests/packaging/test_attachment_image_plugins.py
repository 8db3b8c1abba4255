"""The bundle keeps the Qt image plugins that attachments need to downscale photos (issue 26): JPEG,
GIF (read: a GIF is sent as its first frame) and WebP; the other formats stay out."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _trim() -> ModuleType:
    spec = importlib.util.spec_from_file_location("chatnodes_trim_rules", ROOT / "packaging" / "_trim.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("plugin", ["libqjpeg.so", "libqgif.so", "libqwebp.so", "libqsvg.so"])
def test_the_image_formats_of_attachments_are_kept(plugin: str) -> None:
    trim = _trim()
    assert trim.is_kept_plugin(trim.QT_PLUGIN_PREFIX + "imageformats/" + plugin)


@pytest.mark.parametrize("plugin", ["libqtiff.so", "libqicns.so", "libqtga.so", "libqwbmp.so", "libqpdf.so"])
def test_the_other_image_formats_stay_out(plugin: str) -> None:
    trim = _trim()
    assert not trim.is_kept_plugin(trim.QT_PLUGIN_PREFIX + "imageformats/" + plugin)
