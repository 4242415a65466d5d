"""Azure OpenAI Responses (api "azure-openai-responses"): the Responses wire on Azure's paths.

Request: POST {baseUrl}/responses?api-version={version}, the body and the stream of OpenAI
Responses (``openai_responses``). The base URL is the resource's ``.../openai`` root (the v1 API:
``https://{resource}.openai.azure.com/openai/v1``); a base URL naming a deployment
(``.../openai/deployments/{name}``) is kept as it is. The body's ``model`` is the deployment:
``compat.azureDeployment``, else the model id. ``api-version``: ``compat.azureApiVersion``, else
``v1``. Auth: the key in the ``api-key`` header; ``compat.azureAuth: "bearer"`` sends it as
``Authorization: Bearer`` (a Microsoft Entra ID token). The catalog's base URL names the resource
as ``{resource}``: ``compat.azureResource``, else the environment's AZURE_OPENAI_RESOURCE_NAME.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlencode

from eukhe.inference.wire.events import BadRequest
from eukhe.inference.wire.openai_responses import OpenAIResponses
from eukhe.inference.wire.plan import API_AZURE, Plan, Request

DEFAULT_API_VERSION = "v1"
AUTH_MODES = ("api-key", "bearer")


class AzureOpenAIResponses(OpenAIResponses):
    api = API_AZURE

    def _setting(self, name: str, default: str) -> str:
        value = (self.model.compat or {}).get(name, default)
        if not isinstance(value, str) or not value:
            raise BadRequest(f"{self.provider}: compat.{name} must be a non-empty string, not {value!r}")
        return value

    def build(self, request: Request, plan: Plan) -> tuple[str, dict[str, str], dict[str, Any]]:
        body = self.body(request, plan)
        body["model"] = self._setting("azureDeployment", self.model.id)
        version = self._setting("azureApiVersion", DEFAULT_API_VERSION)
        mode = self._setting("azureAuth", "api-key")
        if mode not in AUTH_MODES:
            raise BadRequest(f"{self.provider}: compat.azureAuth is {mode!r}, not one of {', '.join(AUTH_MODES)}")
        own: dict[str, str] = {}
        if self.model.api_key:
            own = {"authorization": f"Bearer {self.model.api_key}"} if mode == "bearer" else {"api-key": self.model.api_key}
        return self.root() + "/responses?" + urlencode({"api-version": version}), self.headers(own), body

    def root(self) -> str:
        base = self.model.base_url.rstrip("/")
        if "{resource}" not in base:
            return base
        resource = (self.model.compat or {}).get("azureResource") or os.environ.get("AZURE_OPENAI_RESOURCE_NAME")
        if not isinstance(resource, str) or not resource or not all(c.isalnum() or c == "-" for c in resource):
            raise BadRequest(f"{self.provider}: no Azure resource name for {base} (set compat.azureResource or AZURE_OPENAI_RESOURCE_NAME), got {resource!r}")
        return base.replace("{resource}", resource)
