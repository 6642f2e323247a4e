"""The web UI that `charmemory serve` shows at `/`: server-rendered pages over the services."""

from charmemory.web.site import install_web

__all__ = ["install_web"]
