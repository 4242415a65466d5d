"""Reading a recorded request body in its API's own structure: the texts of its user turns (the
user's words, the view, a compaction task), each API read by its own grammar, never by a search
of the whole body's JSON."""

from __future__ import annotations

from typing import Any


def _chat(body: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for message in body["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        out += [content] if isinstance(content, str) else [b["text"] for b in content if b.get("type") == "text"]
    return out


def _responses(body: dict[str, Any]) -> list[str]:
    return [b["text"] for item in body["input"] if item.get("role") == "user" for b in item["content"] if b.get("type") == "input_text"]


def _anthropic(body: dict[str, Any]) -> list[str]:
    return [b["text"] for message in body["messages"] if message["role"] == "user" for b in message["content"] if b.get("type") == "text"]


def _google(body: dict[str, Any]) -> list[str]:
    return [p["text"] for content in body["contents"] if content["role"] == "user" for p in content["parts"] if "text" in p]


READ = {"openai-completions": _chat, "openai-responses": _responses, "anthropic-messages": _anthropic, "google-generative-ai": _google}


def user_texts(api: str, body: dict[str, Any]) -> list[str]:
    """The text pieces of the request's user turns, in order (tool results not counted)."""
    return READ[api](body)
