"""The settings dialog, one module per tab (``providers_page``, ``general_page``, ``prices_page``)."""

from desktop.ui.settings.common import KeyEdits, SettingsContext, key_problem, mask_key
from desktop.ui.settings.dialog import SettingsDialog
from desktop.ui.settings.general_page import GeneralPage
from desktop.ui.settings.prices_page import PRICE_COLUMNS, PricesPage
from desktop.ui.settings.providers_page import ProvidersPage

__all__ = [
    "PRICE_COLUMNS",
    "GeneralPage",
    "KeyEdits",
    "PricesPage",
    "ProvidersPage",
    "SettingsContext",
    "SettingsDialog",
    "key_problem",
    "mask_key",
]
