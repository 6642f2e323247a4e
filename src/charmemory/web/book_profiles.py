"""Memory-book profiles on the books page: each one's preset, title format and model,
changed or made the default; a new one added; a stored one deleted."""

from __future__ import annotations

from typing import Annotated

from fastapi import Form
from fastapi.responses import Response

from charmemory.api.deps import Services
from charmemory.composition import App
from charmemory.core.books.presets import preset_names
from charmemory.web.pages import new_router
from charmemory.web.templating import fragment

router = new_router()


def profiles_region(app: App, *, notice: str = "") -> Response:
    return fragment(
        "_profiles.html", profiles=app.book_profiles.all(), presets=preset_names(), notice=notice
    )


@router.post("/books/profiles")
def save_profile(
    services: Services,
    name: Annotated[str, Form()],
    preset: Annotated[str, Form()],
    title_format: Annotated[str, Form()],
    provider: Annotated[str, Form()] = "",
    model: Annotated[str, Form()] = "",
    separate_prompts: Annotated[bool, Form()] = False,
    default: Annotated[bool, Form()] = False,
) -> Response:
    """Create or change a profile (an empty provider: the chat's own model writes)."""
    saved = services.book_profiles.set(
        name,
        {
            "preset": preset,
            "title_format": title_format,
            "separate_prompts": separate_prompts,
            "provider": provider.strip(),
            "model": model.strip(),
        },
        make_default=default,
    )
    return profiles_region(services, notice=f"profile {saved.name} saved")


@router.post("/books/profiles/{name}/delete")
def delete_profile(name: str, services: Services) -> Response:
    found = services.book_profiles.get(name)
    services.book_profiles.delete(found.name)
    return profiles_region(services, notice=f"profile {found.name} deleted")
