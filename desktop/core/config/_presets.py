"""Provider presets offered by the settings dialog, and the first-start settings."""

from __future__ import annotations

from ._format import ProviderSettings, Settings

__all__ = ["PROVIDER_PRESETS", "default_settings", "preset"]


PROVIDER_PRESETS: list[ProviderSettings] = [
    ProviderSettings(
        id="openai",
        name="OpenAI",
        api="openai",
        base_url="https://api.openai.com/v1",
        key_env="OPENAI_API_KEY",
        models=["gpt-5.4-mini", "gpt-5.5", "gpt-5.4", "gpt-5.4-nano", "gpt-5.2", "gpt-5-mini", "gpt-4.1",
                "gpt-4o-mini"],
    ),
    ProviderSettings(
        id="anthropic",
        name="Anthropic",
        api="anthropic",
        base_url="https://api.anthropic.com",
        key_env="ANTHROPIC_API_KEY",
        models=["claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-5-5", "claude-sonnet-4-6",
                "claude-opus-4-7", "claude-haiku-4-5"],
    ),
    ProviderSettings(
        id="deepseek",
        name="DeepSeek",
        api="openai",
        base_url="https://api.deepseek.com",
        key_env="DEEPSEEK_API_KEY",
        models=["deepseek-v4-flash", "deepseek-v4-pro", "deepseek-chat", "deepseek-reasoner"],
    ),
    ProviderSettings(
        id="openrouter",
        name="OpenRouter",
        api="openai",
        base_url="https://openrouter.ai/api/v1",
        key_env="OPENROUTER_API_KEY",
        models=["anthropic/claude-sonnet-5-5", "openai/gpt-5.4", "google/gemini-3.5-flash",
                "deepseek/deepseek-v4-flash"],
    ),
    ProviderSettings(
        id="gemini",
        name="Gemini",
        api="openai",
        base_url="https://generativelanguage.googleapis.com/v1beta/openai",
        key_env="GEMINI_API_KEY",
        models=["gemini-3.5-flash", "gemini-3.1-pro-preview", "gemini-3.1-flash-lite", "gemini-2.5-pro",
                "gemini-2.5-flash"],
    ),
    ProviderSettings(
        id="groq",
        name="Groq",
        api="openai",
        base_url="https://api.groq.com/openai/v1",
        key_env="GROQ_API_KEY",
        models=["openai/gpt-oss-120b", "openai/gpt-oss-20b", "llama-3.3-70b-versatile",
                "llama-3.1-8b-instant"],
    ),
    ProviderSettings(
        id="ollama",
        name="Ollama",
        api="openai",
        base_url="http://localhost:11434/v1",
        needs_key=False,
        models=["llama3.2", "qwen3", "gpt-oss:20b"],
    ),
    ProviderSettings(
        id="lmstudio",
        name="LM Studio",
        api="openai",
        base_url="http://localhost:1234/v1",
        needs_key=False,
        models=["openai/gpt-oss-20b", "qwen/qwen3-8b"],
    ),
]
"""Providers offered by the settings dialog; ``default_settings()`` starts with all of them."""


def preset(provider_id: str) -> ProviderSettings | None:
    """Return a fresh copy of the preset with this id, or None."""
    for p in PROVIDER_PRESETS:
        if p.id == provider_id:
            return p.copy()
    return None


def default_settings() -> Settings:
    """Settings for a first start: every preset, OpenAI as the default provider."""
    providers = [p.copy() for p in PROVIDER_PRESETS]
    return Settings(providers=providers, default_provider="openai", default_model=providers[0].models[0])


