"""The Qt-free core: chat model, runtime, providers, tools, settings, secrets and projects.

Nothing under ``desktop.core`` may import PySide6, qasync or shiboken6 (import-linter and a test check it).
"""
