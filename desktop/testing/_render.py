"""Rendering of scripted turns into protocol bytes; lives in ``desktop.demo._render`` (re-exported)."""

from desktop.demo._render import (
    Event,
    Protocol,
    RenderContext,
    anthropic_models,
    default_error_type,
    error_body,
    error_event,
    malformed_event,
    openai_models,
    render_json,
    render_stream,
    stop_reason_for,
    usage_for,
)

__all__ = [
    "Protocol",
    "Event",
    "RenderContext",
    "render_stream",
    "render_json",
    "error_body",
    "error_event",
    "malformed_event",
    "anthropic_models",
    "openai_models",
    "stop_reason_for",
    "usage_for",
    "default_error_type",
]
