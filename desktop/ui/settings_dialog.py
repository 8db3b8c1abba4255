"""The settings dialog (kept importable here; the pages live in ``desktop.ui.settings``)."""

from desktop.ui.settings.common import MASK, mask_key
from desktop.ui.settings.dialog import SettingsDialog
from desktop.ui.settings.prices_page import PRICE_COLUMNS

__all__ = ["MASK", "PRICE_COLUMNS", "SettingsDialog", "mask_key"]
