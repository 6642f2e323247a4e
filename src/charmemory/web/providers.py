"""Providers and models: pick a preset, enter its key (never shown back), list its
models (NanoGPT's filters and grouping), choose one, test it, and its own settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Form, Request
from fastapi.responses import Response

from charmemory.api.deps import Services
from charmemory.composition import App
from charmemory.core.providers import preset_named
from charmemory.services.providers import PresetStatus
from charmemory.web.pages import new_router, notice
from charmemory.web.settings import SettingView, setting_views
from charmemory.web.templating import fragment, page

router = new_router()
KEY_STATUS = {
    "secrets file": "stored (secrets file)",
    "env": "from the environment",
    "missing": "missing",
    "not needed": "not needed",
}


@dataclass(frozen=True)
class ProviderView:
    status: PresetStatus
    key: str  # the key's status as people read it; never the key
    filters: tuple[str, ...]
    settings: list[SettingView]


def provider_views(app: App) -> list[ProviderView]:
    return [
        ProviderView(
            status,
            KEY_STATUS.get(status.key, status.key),
            preset_named(status.name).model_filters,
            setting_views(app, "provider", provider=status.name),
        )
        for status in app.providers.presets()
    ]


def _card(app: App, name: str, message: str = "") -> Response:
    view = next(v for v in provider_views(app) if v.status.name == name)
    return fragment("_provider.html", provider=view, message=message)


@router.get("/settings/providers")
def providers_page(request: Request, services: Services) -> Response:
    return page(request, "providers.html", providers=provider_views(services))


@router.post("/settings/providers/{provider}/use")
def use(provider: str, services: Services) -> Response:
    name = preset_named(provider).name
    services.settings.set("model.provider", name)
    return notice(f"{name} answers chats and extraction now (reload to see it marked)")


@router.post("/settings/providers/{provider}/key")
def store_key(provider: str, key: Annotated[str, Form()], services: Services) -> Response:
    name = services.providers.store_key(provider, key.strip())
    return _card(services, name, "key stored")


@router.post("/settings/providers/{provider}/key/remove")
def remove_key(provider: str, services: Services) -> Response:
    name = preset_named(provider).name
    removed = services.providers.remove_key(name)
    return _card(services, name, "key removed" if removed else "no key was stored")


@router.post("/settings/providers/{provider}/models")
async def models(
    provider: str, services: Services, filters: Annotated[list[str] | None, Form()] = None
) -> Response:
    """Connect: the models the provider offers (grouped by publisher where it resells)."""
    name = preset_named(provider).name
    listing = await services.providers.list_models({"provider": name}, filters=filters or ())
    groups = listing.groups or [("", listing.models)]
    return fragment("_models.html", provider=name, groups=groups, count=len(listing.models))


@router.post("/settings/providers/{provider}/model")
def choose_model(provider: str, model: Annotated[str, Form()], services: Services) -> Response:
    name = preset_named(provider).name
    services.settings.set("model.model", model, provider=name)
    return notice(f"{name} uses {model} now")


@router.post("/settings/providers/{provider}/test")
async def test(provider: str, services: Services, model: Annotated[str, Form()] = "") -> Response:
    name = preset_named(provider).name
    overrides = {"provider": name, **({"model": model} if model else {})}
    verdict = await services.providers.test_model(overrides)
    return fragment("_model_test.html", verdict=verdict)
