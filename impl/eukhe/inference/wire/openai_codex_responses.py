"""OpenAI Codex Responses (api "openai-codex-responses"): the Responses wire of the ChatGPT
backend, signed in with a ChatGPT subscription.

Request: POST {baseUrl}/codex/responses (baseUrl ``https://chatgpt.com/backend-api``), the body of
OpenAI Responses (``openai_responses``) with what the backend differs in: ``store: false`` always
(it refuses a request that leaves it out) and ``include: ["reasoning.encrypted_content"]`` always
(nothing is kept server-side, reasoning goes back encrypted); ``instructions`` always, "" without
a system prompt (the backend requires it); no ``max_output_tokens`` and no ``temperature`` (the
backend refuses both). Headers: ``Authorization: Bearer`` (the ChatGPT access token),
``chatgpt-account-id`` (the token's ``https://api.openai.com/auth`` claim, when it carries one),
``OpenAI-Beta: responses=experimental``, ``originator``. The stream is the Responses stream; the
backend may end it with ``response.done`` where the API says ``response.completed``.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from eukhe import strict_json
from eukhe.inference.wire.base import Reader
from eukhe.inference.wire.events import Event
from eukhe.inference.wire.openai_responses import OpenAIResponses, ResponsesReader
from eukhe.inference.wire.plan import API_CODEX, Plan, Request
from eukhe.inference.wire.sse import SseEvent

ORIGINATOR = "eukhe"
AUTH_CLAIM = "https://api.openai.com/auth"
ENCRYPTED = "reasoning.encrypted_content"


def account_id(token: str) -> str | None:
    """The ChatGPT account id a JWT access token carries (its payload is not verified here:
    the server does that), None when the token is no JWT or names none."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = strict_json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (binascii.Error, ValueError):
        return None
    claim = payload.get(AUTH_CLAIM) if isinstance(payload, dict) else None
    account = claim.get("chatgpt_account_id") if isinstance(claim, dict) else None
    return account if isinstance(account, str) and account else None


class OpenAICodexResponses(OpenAIResponses):
    api = API_CODEX

    def build(self, request: Request, plan: Plan) -> tuple[str, dict[str, str], dict[str, Any]]:
        body = self.body(request, plan)
        body.pop("max_output_tokens", None)
        body.pop("temperature", None)
        body["store"] = False
        body["instructions"] = request.system
        include = body.get("include") or []
        body["include"] = include if ENCRYPTED in include else [*include, ENCRYPTED]
        own = {"openai-beta": "responses=experimental", "originator": ORIGINATOR}
        if self.model.api_key:
            own["authorization"] = f"Bearer {self.model.api_key}"
            account = account_id(self.model.api_key)
            if account is not None:
                own["chatgpt-account-id"] = account
        return self.url("/codex/responses"), self.headers(own), body

    def reader(self, plan: Plan) -> Reader:
        return CodexReader(self.provider)


class CodexReader(ResponsesReader):
    def feed(self, event: SseEvent) -> list[Event]:
        if event.event == "response.done" or (event.event == "message" and self.obj(event).get("type") == "response.done"):
            self._end(self.obj(event).get("response"), "response.completed")
            return []
        return super().feed(event)
