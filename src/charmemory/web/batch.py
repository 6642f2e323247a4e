"""placeholder"""

from charmemory.web.pages import new_router

router = new_router()
