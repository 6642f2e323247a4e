"""Settings, generated from the registry: each with its range or choices, its value in
force and where that value comes from (a character's own value is shown as such).

A value is checked by the same validator as the CLI's; one that is refused comes
back inline beside its field, with the rule it broke, and nothing is stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Form, Request
from fastapi.responses import Response

from charmemory.api.deps import Services
from charmemory.composition import App
from charmemory.core.settings.registry import GROUPS
from charmemory.core.settings.spec import ScopeKind, Setting, shown
from charmemory.errors import ConfigError
from charmemory.web.pages import new_router
from charmemory.web.templating import fragment, page

router = new_router()
LONG_TEXT = 60  # past this many characters a text setting gets a text area


@dataclass(frozen=True)
class SettingView:
    setting: Setting
    value: Any
    text: str  # the value as typed into its field
    origin: str  # as people read it: default, workspace, Mira, provider openrouter, a variable
    stored_here: bool  # set in the scope shown (so it can be reset)
    control: str  # number, select, text, textarea
    options: tuple[str, ...]
    character: str
    provider: str
    problem: str = ""
    saved: bool = False

    @property
    def field_id(self) -> str:
        scope = self.provider or self.character or "workspace"
        return "setting-" + "".join(
            c if c.isalnum() else "-" for c in f"{scope}-{self.setting.name}"
        )


def _control(setting: Setting, text: str) -> tuple[str, tuple[str, ...]]:
    if setting.kind in ("int", "number"):
        return "number", ()
    if setting.kind == "bool":
        return "select", ("on", "off")
    if setting.kind == "choice":
        return "select", ("", *setting.choices) if setting.default is None else setting.choices
    if setting.kind == "json" or "\n" in text or "\n" in str(setting.default or ""):
        return "textarea", ()
    return ("textarea" if len(text) > LONG_TEXT else "text"), ()


def _origin(origin: str, character: str) -> str:
    return character if origin == "character" and character else origin


def setting_views(
    app: App, scope: ScopeKind, *, character: str = "", provider: str = "", prefix: str = ""
) -> list[SettingView]:
    rows = app.settings.show(prefix or None, character=character or None, provider=provider or None)
    here = {"workspace": "workspace", "character": "character", "provider": f"provider {provider}"}
    views = []
    for row in rows:
        if scope not in row.setting.scopes:
            continue
        text = "" if row.value is None else shown(row.value)
        control, options = _control(row.setting, text)
        views.append(
            SettingView(
                row.setting,
                row.value,
                text,
                _origin(row.origin, character),
                row.origin == here[scope],
                control,
                options,
                character,
                provider,
            )
        )
    return views


def one_view(app: App, name: str, character: str, provider: str, **changes: Any) -> SettingView:
    scope: ScopeKind = "provider" if provider else "character" if character else "workspace"
    found = next(
        view
        for view in setting_views(app, scope, character=character, provider=provider)
        if view.setting.name == name
    )
    return SettingView(**{**found.__dict__, **changes})


@router.get("/settings")
def settings_page(request: Request, services: Services, character: str = "") -> Response:
    name = services.library.character(character).name if character else ""
    views = setting_views(services, "character" if name else "workspace", character=name)
    groups = [(group, [v for v in views if v.setting.group == group]) for group in GROUPS]
    return page(
        request,
        "settings.html",
        character=name,
        characters=[c.name for c in services.library.characters()],
        groups=[(group, rows) for group, rows in groups if rows],
    )


@router.post("/settings/{name}")
def set_value(
    name: str,
    services: Services,
    value: Annotated[str, Form()] = "",
    character: Annotated[str, Form()] = "",
    provider: Annotated[str, Form()] = "",
) -> Response:
    """Store a value; a refused one comes back beside its field with the reason."""
    try:
        services.settings.set(name, value, character=character or None, provider=provider or None)
    except ConfigError as error:
        view = one_view(services, name, character, provider, text=value, problem=str(error))
        return fragment("_setting_row.html", view=view)
    return fragment(
        "_setting_row.html", view=one_view(services, name, character, provider, saved=True)
    )


@router.post("/settings/{name}/unset")
def unset(
    name: str,
    services: Services,
    character: Annotated[str, Form()] = "",
    provider: Annotated[str, Form()] = "",
) -> Response:
    services.settings.unset(name, character=character or None, provider=provider or None)
    return fragment("_setting_row.html", view=one_view(services, name, character, provider))
