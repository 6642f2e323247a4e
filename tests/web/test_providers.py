"""The providers screen over HTTP: NanoGPT's model filters and grouping, and a provider's
extra request parameters, stored from the page and sent with its requests."""

from __future__ import annotations

import httpx

from tests.api.conftest import Served
from tests.web.support import browser_client, csrf_of

CATALOG = [
    {"id": "deepseek/deepseek-r1", "owned_by": "deepseek"},
    {"id": "openai/gpt-5.2", "owned_by": "openai"},
    {"id": "thedrummer/cydonia-24b", "owned_by": "thedrummer"},
    {
        "id": "sao10k/l3.3-euryale-70b",
        "owned_by": "sao10k",
        "capabilities": {"reasoning": True},
        "description": "A role-play fine-tune",
    },
]
EXTRA = '{"reasoning": {"enabled": false}, "top_k": 40}'


def _providers(client: httpx.Client) -> tuple[str, dict[str, str]]:
    page = client.get("/settings/providers")
    return page.text, {"x-csrf-token": csrf_of(page)}


def _card(page: str, provider: str) -> str:
    return page.split(f'id="provider-{provider}"', 1)[1].split("</details>", 1)[0]


def test_nanogpt_lists_its_models_through_the_filters_ticked(site: Served) -> None:
    site.app.settings.set("model.base_url", site.upstream.root_url + "/api/v1", provider="nanogpt")
    site.upstream.reply_models(CATALOG[1:], path="/api/subscription/v1/models")
    site.upstream.reply_models(CATALOG, path="/api/v1/models")
    with browser_client(site.url) as client:
        page, csrf = _providers(client)
        for name in ("subscription", "open-source", "roleplay", "reasoning"):
            assert f'name="filters" value="{name}"' in _card(page, "nanogpt")
        assert 'name="filters"' not in _card(page, "openrouter")
        key = client.post("/settings/providers/nanogpt/key", data={"key": "nano-1"}, headers=csrf)
        assert "key: stored (secrets file)" in key.text and "nano-1" not in key.text
        url = "/settings/providers/nanogpt/models"
        ticked = client.post(url, data={"filters": ["subscription", "roleplay"]}, headers=csrf)
        assert "2 models." in ticked.text  # role-play models of the subscription list
        assert "<h4>sao10k</h4>" in ticked.text and "<h4>thedrummer</h4>" in ticked.text
        assert "openai/gpt-5.2" not in ticked.text
        open_source = client.post(url, data={"filters": ["open-source"]}, headers=csrf)
        assert "3 models." in open_source.text and "openai/gpt-5.2" not in open_source.text
        assert open_source.text.index("<h4>deepseek</h4>") < open_source.text.index(
            "<h4>thedrummer</h4>"
        )
        unknown = client.post(url, data={"filters": ["cheap"]}, headers=csrf)
        assert "unknown model filter &#39;cheap&#39;" in unknown.text
    asked = [(r.path, r.query, r.headers["authorization"]) for r in site.upstream.requests]
    assert asked == [
        ("/api/subscription/v1/models", {"detailed": "true"}, "Bearer nano-1"),
        ("/api/v1/models", {"detailed": "true"}, "Bearer nano-1"),
    ]


def test_extra_parameters_are_checked_stored_per_provider_and_sent(site: Served) -> None:
    with browser_client(site.url) as client:
        page, csrf = _providers(client)
        assert 'name="value"' in _card(page, "custom").split("model.extra_params", 1)[1]
        save = "/settings/model.extra_params"
        refused = client.post(
            save, data={"value": '{"model": "other"}', "provider": "custom"}, headers=csrf
        )
        assert (
            'role="alert">model.extra_params: may not set model (charmemory sends those itself)'
            in refused.text
        )
        saved = client.post(save, data={"value": EXTRA, "provider": "custom"}, headers=csrf)
        assert 'role="status">saved' in saved.text
        assert "top_k" in _card(client.get("/settings/providers").text, "custom")
        assert "top_k" not in _card(client.get("/settings/providers").text, "nanogpt")
        client.post("/settings/providers/custom/test", headers=csrf)
    body = site.upstream.requests[-1].json
    assert body["reasoning"] == {"enabled": False} and body["top_k"] == 40
    assert body["model"] == "scripted-model"
