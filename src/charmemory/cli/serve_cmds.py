"""`charmemory serve`: the HTTP API and the OpenAI-compatible memory endpoint."""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from charmemory.cli.application import app, state
from charmemory.composition import freeze_long_lived_objects
from charmemory.core.server_access import TOKEN_ENV, access_token

SHUTDOWN_GRACE_S = 10


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8484,
    token: Annotated[
        str | None,
        typer.Option(
            envvar=TOKEN_ENV,
            show_envvar=True,
            help="Access token every request must carry as `Authorization: Bearer TOKEN`.",
            show_default=False,
        ),
    ] = None,
    new_token: Annotated[
        bool,
        typer.Option(
            "--new-token", help="Generate an access token, print it once and keep it (0600)."
        ),
    ] = False,
) -> None:
    """Serve the REST API and the memory endpoint for SillyTavern and other frontends.

    Point a frontend's custom OpenAI-compatible connection at
    http://HOST:PORT/characters/NAME/v1, or at http://HOST:PORT/v1 to have the
    character recognised from each request. API docs: http://HOST:PORT/docs.
    """
    import uvicorn

    from charmemory.api import create_api

    services = state.app()
    stored = services.server_token
    if new_token:
        created = stored.create()
        typer.echo(f"access token (shown once; kept in the workspace): {created}")
    required = access_token(host, token, stored.load())
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    api = create_api(lambda: services, token=required)
    freeze_long_lived_objects()
    services.freeze_after_first_reply()  # what the first reply loads stays too
    base = f"http://{host if ':' not in host else f'[{host}]'}:{port}"
    typer.echo(f"charmemory serves {services.root} at {base} (docs: {base}/docs)", err=True)
    typer.echo(f"web UI: {base}/", err=True)
    typer.echo(f"memory endpoint: {base}/characters/NAME/v1 or {base}/v1", err=True)
    uvicorn.run(
        api,
        host=host,
        port=port,
        access_log=False,
        log_level="warning",
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
    )
