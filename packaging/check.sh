#!/usr/bin/env bash
# Check the PyInstaller bundle dist/chatnodes/: builds it first (packaging/build.sh) unless `--no-build` is
# given and a bundle newer than every source file exists. Then:
#   1. every bundled ELF file finds the Qt / PySide / ICU / Python libraries it links to (trimming went right);
#   2. keyring inside the bundle discovers its backends through their entry points, and the bundled Qt
#      renders the SVG app icon (CHATNODES_BUNDLE_DIAG, see packaging/entry.py);
#   3. `chatnodes --smoke-test` on the offscreen platform starts, paints and exits 0 (timed); then on X11
#      under Xvfb when xvfb-run exists;
#   4. `chatnodes --mcp-probe` connects the bundled MCP SDK to a small stdio MCP server (a stdlib-only script
#      run with the host's python3), lists its tools and calls one;
#   4b. `chatnodes import` (no display, no Qt) imports a small ChatGPT export with the bundled ijson C backend;
#   5. the bundle is at most CHATNODES_BUNDLE_MAX_MB (default 180) MiB.
# Exits non-zero on the first failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUNDLE="$ROOT/dist/chatnodes"
EXE="$BUNDLE/chatnodes"
# 180 MiB since the MCP SDK joined (issue 12): mcp, mcp_types, httpx2/httpcore2, pydantic(-core), anyio,
# jsonschema and their dependencies add ~20-25 MiB to the ~140 MiB Qt app.
MAX_MB="${CHATNODES_BUNDLE_MAX_MB:-180}"
SMOKE_TIMEOUT="${CHATNODES_SMOKE_TIMEOUT:-60}"

log() { printf '[bundle-check] %s\n' "$*"; }
fail() { printf '[bundle-check] FAIL: %s\n' "$*" >&2; exit 1; }

no_build=0
for arg in "$@"; do
    case "$arg" in
        --no-build) no_build=1 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        *) fail "unknown argument $arg (known: --no-build)" ;;
    esac
done

# A bundle is fresh when no source it is built from changed after it.
fresh=0
if [[ -x "$EXE" ]]; then
    newer=$(find desktop packaging resources pyproject.toml -newer "$EXE" -type f \
        ! -path '*/__pycache__/*' ! -name '*.pyc' -print -quit 2>/dev/null || true)
    [[ -z "$newer" ]] && fresh=1
fi
if (( no_build && fresh )); then
    log "using the existing bundle (--no-build, nothing changed since it was built)"
else
    (( no_build )) && log "--no-build given but the bundle is missing or older than its sources: building"
    bash "$ROOT/packaging/build.sh"
fi
[[ -x "$EXE" ]] || fail "$EXE does not exist"

TMP="$(mktemp -d "${TMPDIR:-/tmp}/chatnodes-check.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

# 1. Libraries: only the ones a bundle must carry itself. System libraries (libxcb-*, libwayland-*, libGL)
#    come from the user's desktop and may well be absent on a build machine.
log "checking the bundled binaries' library links"
missing=$(cd "$BUNDLE/_internal" && find . -type f \( -name '*.so' -o -name '*.so.*' \) -print0 \
    | xargs -0 -r env LD_LIBRARY_PATH="$PWD:$PWD/PySide6/Qt/lib:$PWD/shiboken6:$PWD/PySide6" ldd 2>/dev/null \
    | grep -E '^\s*(libQt6|libpyside6|libshiboken6|libicu|libpython)[^ ]* => not found' | sort -u || true)
[[ -z "$missing" ]] || fail "bundled binaries link to libraries the bundle lost:"$'\n'"$missing"

# 2. keyring: entry points and backends made it in (prints the backend it would use on this machine).
log "checking keyring inside the bundle"
if ! CHATNODES_BUNDLE_DIAG=keyring "$EXE" > "$TMP/keyring.txt" 2>&1; then
    cat "$TMP/keyring.txt" >&2
    fail "keyring in the bundle does not see its Secret Service backend"
fi
sed 's/^/    /' "$TMP/keyring.txt"

# 2a. A real round trip through the Secret Service, when this machine can host one: a private D-Bus session
#     with a fresh, unlocked gnome-keyring (its files in a temp HOME; nothing touches the user's keyring).
if command -v dbus-run-session >/dev/null && command -v gnome-keyring-daemon >/dev/null; then
    log "keyring round trip through gnome-keyring in a private D-Bus session"
    # The daemon sometimes answers before its default collection exists; the client then asks to
    # create one, and with no prompter on a headless box that request is "dismissed". That is the
    # machine, not the bundle: try a fresh daemon up to three times, and only report it as a note
    # when every try failed that way. Any other failure fails the check.
    ok=0
    for attempt in 1 2 3; do
        rm -rf "$TMP/keyring-home" && mkdir -p "$TMP/keyring-home"
        if HOME="$TMP/keyring-home" XDG_DATA_HOME="$TMP/keyring-home/data" CHATNODES_BUNDLE_DIAG=keyring-roundtrip \
            timeout "$SMOKE_TIMEOUT" dbus-run-session -- sh -c \
            'printf check | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1; sleep 0.5; exec "$0"' \
            "$EXE" > "$TMP/roundtrip.txt" 2>&1; then
            ok=1
            break
        fi
        grep -q "Prompt dismissed" "$TMP/roundtrip.txt" || break
        log "round trip attempt $attempt: the keyring daemon was not ready (prompt dismissed); retrying"
    done
    if (( ok )); then
        grep '^keyring-' "$TMP/roundtrip.txt" | sed 's/^/    /'
    elif grep -q "Prompt dismissed" "$TMP/roundtrip.txt"; then
        log "note: gnome-keyring here wants a prompt to create its collection (headless): round trip not run"
    else
        cat "$TMP/roundtrip.txt" >&2
        fail "the bundle cannot store and read a secret through the Secret Service"
    fi
else
    log "note: no dbus-run-session + gnome-keyring-daemon here: skipping the Secret Service round trip"
    log "      (apt-get install gnome-keyring dbus-daemon to run it)"
fi

# 2b. Qt: the offscreen platform, SVG image/icon plugins and the bundled app icon survived the trimming.
log "checking Qt inside the bundle"
if ! CHATNODES_BUNDLE_DIAG=qt QT_QPA_PLATFORM=offscreen "$EXE" > "$TMP/qt.txt" 2>&1; then
    cat "$TMP/qt.txt" >&2
    fail "the bundled Qt cannot render the SVG app icon"
fi
sed 's/^/    /' "$TMP/qt.txt"

# 3. Smoke test: a fresh config dir and project, offscreen, exit code 0 within the time-out.
log "smoke test: QT_QPA_PLATFORM=offscreen chatnodes --smoke-test --config-dir <tmp> <tmp project>"
mkdir -p "$TMP/config" "$TMP/project"
t0=$(date +%s%N)
set +e
env -u CHATNODES_CONFIG_DIR QT_QPA_PLATFORM=offscreen HOME="$TMP/home" XDG_DATA_HOME="$TMP/data" \
    timeout "$SMOKE_TIMEOUT" "$EXE" --smoke-test --config-dir "$TMP/config" "$TMP/project" \
    > "$TMP/smoke.txt" 2>&1
rc=$?
set -e
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
sed 's/^/    /' "$TMP/smoke.txt"
(( rc == 124 )) && fail "smoke test did not quit within ${SMOKE_TIMEOUT}s"
(( rc == 0 )) || fail "smoke test exited with $rc"
[[ -f "$TMP/project/project.json" ]] || log "note: the smoke test wrote no project.json"
log "smoke test: exit 0 in ${ms} ms (wall clock, process start to exit)"

# 3b. The same on a real X server (Xvfb) when there is one: proves the xcb platform plugin and its
#     libraries survived the trimming (the offscreen run above cannot).
if command -v xvfb-run >/dev/null; then
    log "smoke test on X11: xvfb-run + QT_QPA_PLATFORM=xcb"
    rm -rf "$TMP/config" "$TMP/project" && mkdir -p "$TMP/config" "$TMP/project"
    set +e
    env -u CHATNODES_CONFIG_DIR QT_QPA_PLATFORM=xcb HOME="$TMP/home" XDG_DATA_HOME="$TMP/data" \
        timeout "$SMOKE_TIMEOUT" xvfb-run -a -s "-screen 0 1280x800x24" \
        "$EXE" --smoke-test --config-dir "$TMP/config" "$TMP/project" > "$TMP/smoke-xcb.txt" 2>&1
    rc=$?
    set -e
    if (( rc != 0 )); then
        sed 's/^/    /' "$TMP/smoke-xcb.txt" >&2
        fail "smoke test on X11 exited with $rc"
    fi
    grep 'first paint' "$TMP/smoke-xcb.txt" | sed 's/^/    /' || true
    log "smoke test on X11: exit 0"
else
    log "note: no xvfb-run here: skipping the X11 smoke test (apt-get install xvfb xauth to run it)"
fi

# 4. MCP: the bundled SDK talks to a real stdio MCP server (newline-delimited JSON-RPC, written with the
#    standard library only so that it runs with any python3 on the build machine).
log "MCP: chatnodes --mcp-probe python3 <small stdio MCP server>"
cat > "$TMP/mcp_server.py" <<'PYEOF'
import json
import sys

TOOLS = [
    {"name": "echo", "description": "Echo the text back.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
     "annotations": {"readOnlyHint": True}},
    {"name": "add", "description": "Add two integers.",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}},
]


def answer(msg_id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    method, msg_id = msg.get("method"), msg.get("id")
    if msg_id is None:
        continue  # notifications (initialized, cancelled)
    if method == "initialize":
        answer(msg_id, {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                        "serverInfo": {"name": "bundle-check", "version": "1"}})
    elif method == "tools/list":
        answer(msg_id, {"tools": TOOLS})
    elif method == "tools/call":
        args = msg["params"].get("arguments") or {}
        text = args.get("text", "") if msg["params"]["name"] == "echo" else str(args.get("a", 0) + args.get("b", 0))
        answer(msg_id, {"content": [{"type": "text", "text": text}], "isError": False})
    elif method == "ping":
        answer(msg_id, {})
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg_id,
                                     "error": {"code": -32601, "message": "method not found"}}) + "\n")
        sys.stdout.flush()
PYEOF
set +e
timeout "$SMOKE_TIMEOUT" "$EXE" --mcp-probe "$(command -v python3)" "$TMP/mcp_server.py" > "$TMP/mcp.txt" 2>&1
rc=$?
set -e
sed 's/^/    /' "$TMP/mcp.txt"
(( rc == 0 )) || fail "the bundled MCP client could not use the stdio server (exit $rc)"
grep -q '^mcp-tool: mcp__probe__echo$' "$TMP/mcp.txt" || fail "the probe did not list the server's tools"
log "MCP: ok"

# 4b. Import: `chatnodes import` (no Qt) streams a small ChatGPT export into a new project with the bundled
#     ijson, whose C backend must have made it in (it is loaded with importlib).
log "ijson backend inside the bundle"
CHATNODES_BUNDLE_DIAG=ijson "$EXE" > "$TMP/ijson.txt" 2>&1 || { cat "$TMP/ijson.txt" >&2; fail "the bundle lost ijson's C backend"; }
sed 's/^/    /' "$TMP/ijson.txt"
log "import: chatnodes import <small conversations.json> --project <tmp>"
cat > "$TMP/conversations.json" <<'JSONEOF'
[{"title": "Bundle check", "conversation_id": "bundle-1", "create_time": 1700000000.0, "current_node": "a",
  "mapping": {"root": {"id": "root", "message": null, "parent": null, "children": ["u"]},
    "u": {"id": "u", "parent": "root", "children": ["a"], "message": {"id": "u", "author": {"role": "user"},
      "create_time": 1700000001.0, "content": {"content_type": "text", "parts": ["hello"]}, "recipient": "all"}},
    "a": {"id": "a", "parent": "u", "children": [], "message": {"id": "a", "author": {"role": "assistant"},
      "create_time": 1700000002.0, "content": {"content_type": "text", "parts": ["hi"]},
      "metadata": {"model_slug": "gpt-4o"}, "recipient": "all"}}}}]
JSONEOF
set +e
env -u CHATNODES_CONFIG_DIR -u DISPLAY -u WAYLAND_DISPLAY HOME="$TMP/home" timeout "$SMOKE_TIMEOUT" \
    "$EXE" import "$TMP/conversations.json" --project "$TMP/imported" --config-dir "$TMP/config" > "$TMP/import.txt" 2>&1
rc=$?
set -e
sed 's/^/    /' "$TMP/import.txt"
(( rc == 0 )) || fail "the bundled import failed (exit $rc)"
grep -q '^Imported 1 conversation (2 messages)' "$TMP/import.txt" || fail "the bundled import did not import the conversation"
[[ -f "$TMP/imported/project.json" ]] || fail "the bundled import wrote no project.json"
log "import: ok"

# 5. Size.
size_kb=$(du -sk "$BUNDLE" | cut -f1)
size_mb=$(( (size_kb + 1023) / 1024 ))
log "bundle size: $(du -sh "$BUNDLE" | cut -f1) (${size_mb} MiB; limit ${MAX_MB} MiB)"
(( size_mb <= MAX_MB )) || fail "the bundle is ${size_mb} MiB, over the ${MAX_MB} MiB budget"
log "OK"
