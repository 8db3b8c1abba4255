"""``python -m desktop import FILE [--project DIR]`` and ``export``: no display, no Qt, clear exit codes."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from import_builders import branchy_chatgpt, chatgpt_zip

from desktop.cli import main
from desktop.core.store import ProjectStore

REPO = Path(__file__).resolve().parents[2]


def run(*args: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in args], out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def env() -> dict[str, str]:
    e = dict(os.environ)
    e.pop("DISPLAY", None)
    e.pop("WAYLAND_DISPLAY", None)
    e.pop("QT_QPA_PLATFORM", None)
    return e


def test_the_module_imports_without_a_display_and_without_qt(tmp_path: Path) -> None:
    export = chatgpt_zip(tmp_path / "export.zip", [branchy_chatgpt("c0", "Rome trip")])
    project = tmp_path / "project"
    script = (
        "import runpy, sys\n"
        f"sys.argv = ['desktop', 'import', {str(export)!r}, '--project', {str(project)!r}]\n"
        "try:\n"
        "    runpy.run_module('desktop', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "qt = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'qasync'))\n"
        "print('EXIT', code, 'QT', qt)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Imported 1 conversation (17 messages) from" in proc.stdout
    assert "  + Rome trip  (17 messages, 4 branches)" in proc.stdout
    assert proc.stdout.strip().endswith("EXIT 0 QT []")
    with ProjectStore(project) as store:
        assert [n.title for n in store.load().nodes] == ["Rome trip"]


def test_python_dash_m_desktop_import_end_to_end(tmp_path: Path) -> None:
    export = chatgpt_zip(tmp_path / "export.zip", [branchy_chatgpt("c0", "Rome trip")])
    cmd = [sys.executable, "-m", "desktop", "import", str(export), "--project", str(tmp_path / "p")]
    first = subprocess.run(cmd, cwd=REPO, env=env(), capture_output=True, text=True, timeout=120, check=False)
    again = subprocess.run(cmd, cwd=REPO, env=env(), capture_output=True, text=True, timeout=120, check=False)
    assert first.returncode == 0 and again.returncode == 0, (first.stderr, again.stderr)
    assert "Imported 0 conversations" in again.stdout
    assert "  - Rome trip  (already imported; id c0)" in again.stdout


def test_failures_exit_non_zero_with_a_clear_message(tmp_path: Path) -> None:
    code, out, err = run("import", tmp_path / "missing.zip", "--project", tmp_path / "p")
    assert code == 1 and "error: " in err and "missing.zip: no such file" in err
    assert not (tmp_path / "p" / "project.json").exists()

    bad = tmp_path / "conversations.json"
    good = branchy_chatgpt("c-ok", "Fine")
    bad.write_text(
        json.dumps([good, {"title": "Broken", "conversation_id": "c-bad", "mapping": 3}]), encoding="utf-8"
    )
    code, out, err = run("import", bad, "--project", tmp_path / "p")
    assert code == 1
    assert "  + Fine" in out
    assert "  ! conversation 2 'Broken' (id c-bad): 'mapping' must be an object, got int" in out


def test_a_project_open_in_a_window_is_left_alone(tmp_path: Path) -> None:
    export = chatgpt_zip(tmp_path / "export.zip", [branchy_chatgpt()])
    with ProjectStore(tmp_path / "p") as window:
        window.save(window.open().value)
        code, out, err = run("import", export, "--project", tmp_path / "p")
    assert code == 1
    assert f"is open in Chat Nodes (process {os.getpid()}); close it there" in err
    assert "Nothing was imported" in err


def test_list_and_export(tmp_path: Path) -> None:
    export = chatgpt_zip(tmp_path / "export.zip", [branchy_chatgpt("c0", "Rome trip")])
    code, out, _ = run("import", export, "--list")
    assert code == 0 and "Rome trip  (17 messages, 4 branches)  id c0" in out
    assert not (tmp_path / "p").exists()
    run("import", export, "--project", tmp_path / "p")
    code, out, err = run("export", tmp_path / "out.json", "--project", tmp_path / "p", "--node", "Rome trip")
    assert code == 0, err
    assert out.startswith("Exported 1 node of")
    code, out, err = run("import", tmp_path / "out.json", "--project", tmp_path / "q")
    assert code == 0 and "  + Rome trip" in out and "(chatnodes)" in out
    code, _, err = run("export", tmp_path / "o.json", "--project", tmp_path / "p", "--node", "nope")
    assert code == 1 and "no node nope" in err
