"""Google Vertex AI (api "google-vertex"): Gemini's body and stream on Vertex's paths.

Request: POST
{baseUrl}/projects/{project}/locations/{location}/publishers/google/models/{model}:streamGenerateContent?alt=sse
with ``Authorization: Bearer`` (an OAuth access token, e.g. ``gcloud auth print-access-token``).
The base URL is Vertex's ``/v1`` root, ``https://{location}-aiplatform.googleapis.com/v1``
(``{location}`` filled in; the location ``global`` is ``aiplatform.googleapis.com``); a base URL
that already names its project (``.../projects/...``) is kept as it is. Project and location:
``compat.vertexProject`` and ``compat.vertexLocation``, else the environment's
GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION (the names gcloud and Google's SDKs read); a
missing project is a BadRequest before any request. The body is Gemini's (``google``, the
rulebook's thinkingLevel or budget, S6.13), the stream is read by Gemini's reader.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import quote

from eukhe.inference.wire.events import BadRequest
from eukhe.inference.wire.google import GoogleGenerative
from eukhe.inference.wire.plan import API_VERTEX, Plan, Request

DEFAULT_LOCATION = "us-central1"


class GoogleVertex(GoogleGenerative):
    api = API_VERTEX

    def _setting(self, name: str, variable: str) -> str | None:
        value = (self.model.compat or {}).get(name)
        if value is None:
            value = os.environ.get(variable) or None
        if value is not None and (not isinstance(value, str) or not value or "/" in value):
            raise BadRequest(f"{self.provider}: compat.{name} must be a non-empty name without '/', not {value!r}")
        return value

    def root(self) -> str:
        """The base URL down to the model's publisher: .../projects/{p}/locations/{l}."""
        location = self._setting("vertexLocation", "GOOGLE_CLOUD_LOCATION") or DEFAULT_LOCATION
        base = self.model.base_url.rstrip("/")
        if "{location}" in base:
            host_location = "" if location == "global" else f"{location}-"
            base = base.replace("{location}-", host_location).replace("{location}", location)
        if "/projects/" in base:
            return base
        project = self._setting("vertexProject", "GOOGLE_CLOUD_PROJECT")
        if project is None:
            raise BadRequest(f"{self.provider}: no Vertex project (set compat.vertexProject or GOOGLE_CLOUD_PROJECT)")
        return f"{base}/projects/{quote(project, safe='')}/locations/{quote(location, safe='')}"

    def build(self, request: Request, plan: Plan) -> tuple[str, dict[str, str], dict[str, Any]]:
        _url, _headers, body = super().build(request, plan)
        own = {"authorization": f"Bearer {self.model.api_key}"} if self.model.api_key else {}
        model = quote(self.model.id, safe="")
        return f"{self.root()}/publishers/google/models/{model}:streamGenerateContent?alt=sse", self.headers(own), body
