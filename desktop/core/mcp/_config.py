"""The ``mcpServers`` object as Claude Desktop, Cursor and Claude Code write it, plus our own keys.

Stdio servers are ``{"command", "args", "env", "cwd"}``; HTTP servers are ``{"type": "http" |
"streamable-http" | "sse", "url", "headers"}`` (a ``url`` without ``type`` means streamable HTTP, as
Cursor writes it). Our optional keys: ``"enabled"`` (default true), ``"approval"`` (``"ask"`` default,
``"ask_unless_read_only"``, ``"never"``), ``"timeout_s"`` (default 60) and, for stdio servers,
``"max_message_mb"`` (default 32: the longest line the server may write to stdout; past it the server is
stopped). Unknown keys are kept verbatim and written back on save.

``${env:NAME}`` (and Claude Code's ``${NAME}`` / ``${NAME:-default}``) in env and header values are
expanded by :func:`resolve_launch` when a server starts; the stored config keeps the references. A
bearer token comes from a ``secret_for(name)`` callable (the app reads the keyring: service
``chatnodes``, user ``mcp:<name>``) and is never stored here.

Nothing in this module imports the MCP SDK.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias, get_args

from desktop.core.visible import visible_text

from ..files import read_regular

__all__ = [
    "Approval",
    "Transport",
    "APPROVALS",
    "DEFAULT_TIMEOUT_S",
    "DEFAULT_MAX_MESSAGE_MB",
    "KEYRING_SERVICE",
    "McpConfigError",
    "McpImportError",
    "McpServerConfig",
    "ResolvedStdio",
    "ResolvedHttp",
    "keyring_user",
    "parse_mcp_server",
    "parse_mcp_servers",
    "mcp_servers_to_dict",
    "parse_mcp_file",
    "resolve_launch",
    "expand_env_refs",
    "claude_desktop_config_path",
    "import_claude_desktop",
]

Approval: TypeAlias = Literal["ask", "ask_unless_read_only", "never"]
Transport: TypeAlias = Literal["stdio", "http", "sse"]

APPROVALS: frozenset[str] = frozenset(get_args(Approval))
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_MESSAGE_MB = 32.0
"""The longest message (one stdout line) a stdio server may send, in MiB: room for a tool result of
several full-size images (5 MB of base64 each) plus text; a hostile or runaway line stops there."""
KEYRING_SERVICE = "chatnodes"

_TYPES: dict[str, Transport] = {"stdio": "stdio", "http": "http", "streamable-http": "http", "sse": "sse"}
_KNOWN_KEYS = frozenset(
    {"command", "args", "env", "cwd", "type", "url", "headers", "enabled", "approval", "timeout_s",
     "max_message_mb"}
)
_MAX_MESSAGE_MB_LIMIT = 1024
_ENV_REF = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def keyring_user(name: str) -> str:
    """The keyring user name under which the bearer token of server ``name`` is stored."""
    return f"mcp:{name}"


class McpConfigError(ValueError):
    """The ``mcpServers`` object is invalid; every problem names the server and the field.

    Attributes:
        problems: One readable line per problem, e.g. ``server "files": "args" must be a list of strings``.
    """

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)


class McpImportError(Exception):
    """A config file of another client could not be read (missing, unreadable, invalid)."""


@dataclass(frozen=True, slots=True)
class McpServerConfig:
    """One configured MCP server, exactly as stored (references such as ``${env:X}`` unexpanded).

    Attributes:
        name: The server's key in ``mcpServers``.
        transport: ``stdio``, ``http`` (streamable HTTP) or ``sse`` (the old HTTP+SSE transport).
        command: The executable (stdio).
        args: Its arguments (stdio).
        env: Extra environment variables (stdio), values may hold ``${env:NAME}``.
        cwd: Working folder (stdio); relative to ``base_dir`` when that is set.
        url: Endpoint URL (http, sse).
        headers: Extra HTTP headers (http, sse), values may hold ``${env:NAME}``.
        type: The ``type`` spelling found in the file (``None`` when absent), written back as is.
        enabled: False keeps the server configured but never started.
        approval: ``ask`` (every call), ``ask_unless_read_only`` or ``never``.
        timeout_s: Seconds a tool call may take.
        max_message_mb: The longest stdout line a stdio server may write, in MiB (then it is stopped).
        extra: Unknown keys, kept verbatim for the round trip.
        base_dir: The folder a project server belongs to (not serialised): the default working folder
            and the base of a relative ``cwd``.
    """

    name: str
    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    type: str | None = None
    enabled: bool = True
    approval: Approval = "ask"
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_message_mb: float = DEFAULT_MAX_MESSAGE_MB
    extra: Mapping[str, Any] = field(default_factory=dict)
    base_dir: str | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object for this server (our keys only when not default, unknown keys kept)."""
        out: dict[str, Any] = {}
        if self.type is not None:
            out["type"] = self.type
        if self.transport == "stdio":
            out["command"] = self.command
            if self.args:
                out["args"] = list(self.args)
            if self.env:
                out["env"] = dict(self.env)
            if self.cwd is not None:
                out["cwd"] = self.cwd
        else:
            out["url"] = self.url
            if self.headers:
                out["headers"] = dict(self.headers)
        if not self.enabled:
            out["enabled"] = False
        if self.approval != "ask":
            out["approval"] = self.approval
        if self.timeout_s != DEFAULT_TIMEOUT_S:
            out["timeout_s"] = int(self.timeout_s) if float(self.timeout_s).is_integer() else self.timeout_s
        if self.max_message_mb != DEFAULT_MAX_MESSAGE_MB:
            size = self.max_message_mb
            out["max_message_mb"] = int(size) if float(size).is_integer() else size
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out

    def describe(self) -> str:
        """The command line (stdio) or the URL (http, sse), for lists and the trust banner."""
        if self.transport == "stdio":
            line = shlex.join([self.command or "", *self.args])
            return f"{line}  (in {self.cwd})" if self.cwd else line
        return (self.url or "") if self.transport == "http" else f"{self.url} (SSE)"


def _where(name: str, key: str | None = None) -> str:
    """How an error names a server's field; names come from files, so they are made visible."""
    shown = visible_text(name)
    return f'server "{shown}"' if key is None else f'server "{shown}": "{visible_text(key)}"'


def _str_map(name: str, key: str, value: object, problems: list[str]) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(f"{_where(name, key)} must be an object of strings")
        return {}
    out: dict[str, str] = {}
    for k, v in value.items():
        if not isinstance(v, str):
            problems.append(f"{_where(name, key)}: the value of {k!r} must be a string")
        else:
            out[str(k)] = v
    return out


def parse_mcp_server(name: str, raw: object, *, base_dir: str | None = None) -> McpServerConfig:
    """Validate one server entry.

    Args:
        name: The server's key.
        raw: Its JSON value.
        base_dir: For project servers: the project folder (see ``McpServerConfig.base_dir``).

    Raises:
        McpConfigError: Every problem found, each naming the server and the field.
    """
    problems: list[str] = []
    if not isinstance(name, str) or not name.strip():
        raise McpConfigError(["a server name must be a non-empty string"])
    if any(ord(c) < 32 for c in name):
        raise McpConfigError([f"{_where(name)}: the name must not contain control characters"])
    if not isinstance(raw, dict):
        raise McpConfigError([f"{_where(name)} must be a JSON object"])
    type_ = raw.get("type")
    if type_ is not None and (not isinstance(type_, str) or type_ not in _TYPES):
        problems.append(f'{_where(name, "type")} must be one of "stdio", "http", "streamable-http", "sse"')
        type_ = None
    has_command, has_url = "command" in raw, "url" in raw
    if type_ is not None:
        transport = _TYPES[type_]
    elif has_url and not has_command:
        transport = "http"
    else:
        transport = "stdio"
    command = url = cwd = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = {}
    headers: dict[str, str] = {}
    if transport == "stdio":
        if has_url:
            problems.append(f'{_where(name, "url")} is for HTTP servers; a stdio server has a "command"')
        command = raw.get("command")
        if not isinstance(command, str) or not command.strip():
            problems.append(f'{_where(name, "command")} must be a non-empty string')
            command = None
        raw_args = raw.get("args", [])
        if not isinstance(raw_args, list) or not all(isinstance(a, str) for a in raw_args):
            problems.append(f'{_where(name, "args")} must be a list of strings')
        else:
            args = tuple(raw_args)
        env = _str_map(name, "env", raw.get("env"), problems)
        cwd = raw.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            problems.append(f'{_where(name, "cwd")} must be a string')
            cwd = None
    else:
        if has_command:
            problems.append(f'{_where(name, "command")} is for stdio servers; an HTTP server has a "url"')
        url = raw.get("url")
        if not isinstance(url, str) or not re.match(r"^https?://[^\s/]+", url):
            problems.append(f'{_where(name, "url")} must be an http:// or https:// URL')
            url = None
        headers = _str_map(name, "headers", raw.get("headers"), problems)
    enabled = raw.get("enabled", True)
    if not isinstance(enabled, bool):
        problems.append(f'{_where(name, "enabled")} must be true or false')
        enabled = True
    approval = raw.get("approval", "ask")
    if approval not in APPROVALS:
        problems.append(f'{_where(name, "approval")} must be "ask", "ask_unless_read_only" or "never"')
        approval = "ask"
    timeout = raw.get("timeout_s", DEFAULT_TIMEOUT_S)
    is_number = isinstance(timeout, int | float) and not isinstance(timeout, bool)
    if not is_number or not math.isfinite(timeout) or timeout <= 0:
        problems.append(f'{_where(name, "timeout_s")} must be a positive number of seconds')
        timeout = DEFAULT_TIMEOUT_S
    max_mb = raw.get("max_message_mb", DEFAULT_MAX_MESSAGE_MB)
    is_number = isinstance(max_mb, int | float) and not isinstance(max_mb, bool)
    if not is_number or not math.isfinite(max_mb) or not 0 < max_mb <= _MAX_MESSAGE_MB_LIMIT:
        problems.append(f'{_where(name, "max_message_mb")} must be a number of MB above 0 and at most '
                        f"{_MAX_MESSAGE_MB_LIMIT}")
        max_mb = DEFAULT_MAX_MESSAGE_MB
    if problems:
        raise McpConfigError(problems)
    return McpServerConfig(
        name=name,
        transport=transport,
        command=command,
        args=args,
        env=env,
        cwd=cwd,
        url=url,
        headers=headers,
        type=type_,
        enabled=enabled,
        approval=approval,
        timeout_s=float(timeout),
        max_message_mb=float(max_mb),
        extra={k: v for k, v in raw.items() if k not in _KNOWN_KEYS},
        base_dir=base_dir,
    )


def parse_mcp_servers(raw: object, *, base_dir: str | None = None) -> dict[str, McpServerConfig]:
    """Validate a whole ``mcpServers`` object (the value, not the wrapper), keeping its order.

    Raises:
        McpConfigError: Every problem of every server.
    """
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise McpConfigError(['"mcpServers" must be a JSON object of servers'])
    servers: dict[str, McpServerConfig] = {}
    problems: list[str] = []
    for name, entry in raw.items():
        try:
            servers[name] = parse_mcp_server(name, entry, base_dir=base_dir)
        except McpConfigError as err:
            problems.extend(err.problems)
    if problems:
        raise McpConfigError(problems)
    return servers


def mcp_servers_to_dict(servers: Mapping[str, McpServerConfig]) -> dict[str, Any]:
    """The ``mcpServers`` object for ``servers`` (inverse of :func:`parse_mcp_servers`)."""
    return {name: server.to_dict() for name, server in servers.items()}


def parse_mcp_file(data: bytes, *, source: str, base_dir: str | None = None) -> dict[str, McpServerConfig]:
    """Parse a whole config file with a top-level ``mcpServers`` (``.mcp.json``, Claude Desktop's file).

    Args:
        data: The file's bytes.
        source: How to name the file in errors (a path).
        base_dir: Passed to every server (project files).

    Raises:
        McpConfigError: Not JSON, no object, or invalid servers; messages start with ``source``.
    """
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise McpConfigError([f"{source}: not valid JSON ({err})"]) from None
    except RecursionError:
        raise McpConfigError([f"{source}: JSON nested too deeply"]) from None
    if not isinstance(doc, dict):
        raise McpConfigError([f"{source}: the file must hold a JSON object"])
    try:
        return parse_mcp_servers(doc.get("mcpServers", {}), base_dir=base_dir)
    except McpConfigError as err:
        raise McpConfigError([f"{source}: {p}" for p in err.problems]) from None


def expand_env_refs(value: str, environ: Mapping[str, str], *, where: str) -> str:
    """Replace ``${env:NAME}``, ``${NAME}`` and ``${NAME:-default}`` with values from ``environ``.

    Raises:
        McpConfigError: A referenced variable is not set and has no default (names ``where``).
    """

    def repl(match: re.Match[str]) -> str:
        var, default = match.group(1), match.group(2)
        if var in environ:
            return environ[var]
        if default is not None:
            return default
        raise McpConfigError([f"{where} refers to ${{env:{var}}}, which is not set"])

    return _ENV_REF.sub(repl, value)


@dataclass(frozen=True, slots=True)
class ResolvedStdio:
    """What starting a stdio server needs, references expanded (``env`` never shown in repr)."""

    command: str
    args: tuple[str, ...]
    env: dict[str, str] = field(repr=False)
    cwd: str | None


@dataclass(frozen=True, slots=True)
class ResolvedHttp:
    """What connecting to an HTTP server needs, references expanded (``headers`` never shown in repr)."""

    url: str
    sse: bool
    headers: dict[str, str] = field(repr=False)


def resolve_launch(
    server: McpServerConfig,
    *,
    environ: Mapping[str, str] | None = None,
    secret_for: Callable[[str], str | None] | None = None,
) -> ResolvedStdio | ResolvedHttp:
    """Expand references and add the bearer token: what the manager passes to the SDK.

    A token from ``secret_for(server.name)`` becomes ``Authorization: Bearer <token>`` for HTTP
    servers and replaces an ``Authorization`` header from the file.

    Raises:
        McpConfigError: A referenced variable is missing (names the server and field).
    """
    env_src = os.environ if environ is None else environ
    if server.transport == "stdio":
        env = {
            k: expand_env_refs(v, env_src, where=_where(server.name, f"env.{k}"))
            for k, v in server.env.items()
        }
        cwd = server.cwd
        if server.base_dir is not None:
            cwd = str(Path(server.base_dir, cwd)) if cwd else server.base_dir
        return ResolvedStdio(command=server.command or "", args=tuple(server.args), env=env, cwd=cwd)
    headers = {
        k: expand_env_refs(v, env_src, where=_where(server.name, f"headers.{k}"))
        for k, v in server.headers.items()
    }
    token = secret_for(server.name) if secret_for is not None else None
    if token:
        headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        headers["Authorization"] = f"Bearer {token}"
    return ResolvedHttp(url=server.url or "", sse=server.transport == "sse", headers=headers)


def claude_desktop_config_path(
    *, platform: str | None = None, environ: Mapping[str, str] | None = None, home: Path | None = None
) -> Path:
    """Where Claude Desktop keeps ``claude_desktop_config.json`` on this platform.

    macOS: ``~/Library/Application Support/Claude``; Windows: ``%APPDATA%\\Claude``; elsewhere (the
    unofficial Linux builds): ``$XDG_CONFIG_HOME/Claude`` (``~/.config/Claude``).
    """
    plat = sys.platform if platform is None else platform
    env = os.environ if environ is None else environ
    base_home = Path.home() if home is None else home
    if plat == "darwin":
        folder = base_home / "Library" / "Application Support" / "Claude"
    elif plat.startswith("win"):
        appdata = env.get("APPDATA")
        folder = Path(appdata) / "Claude" if appdata else base_home / "AppData" / "Roaming" / "Claude"
    else:
        xdg = env.get("XDG_CONFIG_HOME")
        folder = (Path(xdg) if xdg else base_home / ".config") / "Claude"
    return folder / "claude_desktop_config.json"


def import_claude_desktop(path: Path | None = None) -> dict[str, McpServerConfig]:
    """Read the servers of Claude Desktop's config ("Import from Claude Desktop").

    Args:
        path: The file; the platform's location (:func:`claude_desktop_config_path`) when omitted.

    Returns:
        The servers in file order (may be empty when the file has no ``mcpServers``).

    Raises:
        McpImportError: The file is missing, unreadable, not JSON, or holds invalid servers; the message
            says which and names the file.
    """
    target = claude_desktop_config_path() if path is None else path
    try:
        data = read_regular(target)  # a FIFO or device picked by mistake is refused, never waited on
    except FileNotFoundError:
        raise McpImportError(f"Claude Desktop's config was not found at {target}") from None
    except OSError as err:
        raise McpImportError(f"cannot read {target}: {err.strerror or err}") from None
    try:
        return parse_mcp_file(data, source=str(target))
    except McpConfigError as err:
        raise McpImportError(str(err)) from None
