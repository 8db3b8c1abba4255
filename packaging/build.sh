#!/usr/bin/env bash
# Build the one-folder PyInstaller bundle dist/chatnodes/ from a clean venv (.venv-bundle).
#
# The dev .venv is never used: it holds test tools, and PyInstaller must only see what `pip install .` ships.
# The project is installed non-editable from a staged copy of its sources in a temp dir, so the build writes
# nothing into the repo except .venv-bundle/, build/pyinstaller/ and dist/chatnodes/ (all git-ignored).
#
# Environment: PYTHON (interpreter that creates the venv, default python3),
#              CHATNODES_BUNDLE_NO_TRIM=1 (build the untrimmed bundle, to measure what trimming saves).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PYTHON="${PYTHON:-python3}"
VENV="$ROOT/.venv-bundle"
DIST="$ROOT/dist"
WORK="$ROOT/build/pyinstaller"
PIP_FLAGS=(--disable-pip-version-check -q)

log() { printf '[bundle] %s\n' "$*"; }
# pip's configured extra indexes print one warning per package; keep pip's real errors visible.
quiet_pip() {
    "$VENV/bin/python" -m pip "$@" 2> >(grep -v 'is neither a file nor a directory' >&2)
}

start=$(date +%s)

if [[ ! -x "$VENV/bin/python" ]]; then
    log "creating $VENV with $("$PYTHON" --version 2>&1)"
    "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" - <<'EOF'
import sys
if not ((3, 11) <= sys.version_info[:2] < (3, 14)):
    sys.exit(f".venv-bundle runs Python {sys.version.split()[0]}; the project needs 3.11-3.13 "
             "(delete .venv-bundle and set PYTHON)")
EOF

# Stage the sources pip needs (what an sdist would hold), so pip's in-tree build leaves the repo alone.
STAGE="$(mktemp -d "${TMPDIR:-/tmp}/chatnodes-bundle.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
tar -C "$ROOT" -cf - --exclude='__pycache__' --exclude='*.pyc' --exclude='*.egg-info' \
    pyproject.toml README.md desktop $(cd "$ROOT" && ls -d LICENSE* setup.cfg setup.py MANIFEST.in 2>/dev/null) \
    | tar -C "$STAGE" -xf -

log "installing the project (non-editable) and PyInstaller into .venv-bundle"
quiet_pip install "${PIP_FLAGS[@]}" "$STAGE[bundle]"
# Same version number as last time: force pip to replace the installed copy with the current sources.
quiet_pip install "${PIP_FLAGS[@]}" --no-deps --force-reinstall "$STAGE"

for binding in PyQt5 PyQt6 PySide2; do
    if "$VENV/bin/python" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('$binding') is None)"; then
        log "ERROR: $binding is installed in .venv-bundle; PyInstaller would abort on two Qt bindings." >&2
        log "       Delete .venv-bundle and run again." >&2
        exit 1
    fi
done

log "running PyInstaller (one-folder) -> dist/chatnodes/"
build_start=$(date +%s)
# The console script, not `python -m PyInstaller`: -m would put the repo root on sys.path and bundle the
# source tree instead of the installed package (the spec refuses that).
(cd "$ROOT/packaging" && "$VENV/bin/pyinstaller" --noconfirm --clean --log-level WARN \
    --distpath "$DIST" --workpath "$WORK" chatnodes.spec)
build_end=$(date +%s)

BUNDLE="$DIST/chatnodes"
if [[ ! -x "$BUNDLE/chatnodes" ]]; then
    log "ERROR: $BUNDLE/chatnodes was not produced" >&2
    exit 1
fi
size_kb=$(du -sk "$BUNDLE" | cut -f1)
log "bundle: $BUNDLE ($(du -sh "$BUNDLE" | cut -f1), $((size_kb / 1024)) MiB)"
log "time: PyInstaller $((build_end - build_start)) s, total $(( $(date +%s) - start )) s"
