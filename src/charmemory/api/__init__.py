"""The HTTP API: REST over the services, and the OpenAI-compatible memory endpoint."""

from charmemory.api.app import create_api

__all__ = ["create_api"]
