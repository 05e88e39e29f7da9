"""Translation helpers: every user-visible string goes through :func:`tr`.

``.ts`` sources live in ``i18n/`` at the plugin root; ``.qm`` files are built from them
(``make translations``), never committed.
"""

from __future__ import annotations

from pathlib import Path

from qgis.PyQt.QtCore import QCoreApplication, QLocale, QSettings, QTranslator

CONTEXT = "GeoFaham"
PLUGIN_ROOT = Path(__file__).resolve().parents[2]
I18N_DIR = PLUGIN_ROOT / "i18n"


def tr(text: str) -> str:
    return QCoreApplication.translate(CONTEXT, text)


def N_(text: str) -> str:  # noqa: N802 (gettext convention)
    """Marks a string for translation where it is defined; ``tr()`` translates it where it is shown."""
    return text


def user_locale() -> str:
    """QGIS's UI locale (``locale/userLocale``), falling back to the system locale; e.g. ``fr``."""
    value = QSettings().value("locale/userLocale", "") or QLocale.system().name()
    return str(value)[:2]


def install_translator(locale: str | None = None, qm_dir: Path | None = None) -> QTranslator | None:
    """Load ``geofaham_<locale>.qm`` if it was built; returns the installed translator (keep it to remove it)."""
    locale = locale or user_locale()
    qm = (qm_dir or I18N_DIR) / f"geofaham_{locale}.qm"
    if not qm.is_file():
        return None
    translator = QTranslator()
    if not translator.load(str(qm)):
        return None
    QCoreApplication.installTranslator(translator)
    return translator


def remove_translator(translator: QTranslator | None) -> None:
    if translator is not None:
        QCoreApplication.removeTranslator(translator)
