"""The characters screen's import over HTTP: a memory file lands where the memory
manager reads it, and an unreadable one is refused in one line without stopping the rest."""

from __future__ import annotations

from tests.api.conftest import Served
from tests.web.support import browser_client, csrf_of

MEMORIES = (
    "# Mira's memories\n\n"
    '<memory chat="pinned" date="2026-02-20 08:00">\n'
    "- Mira keeps a brass compass in her coat.\n</memory>\n"
)


def test_a_memory_file_is_imported_and_the_memory_manager_shows_it(site: Served) -> None:
    with browser_client(site.url) as client:
        csrf = {"x-csrf-token": csrf_of(client.get("/"))}
        files = [
            ("files", ("Mira-memories.md", MEMORIES.encode(), "text/markdown")),
            ("files", ("broken.md", b"- caf\xe9 in Latin-1\n", "text/markdown")),
        ]
        answer = client.post("/import", files=files, headers=csrf)
        assert answer.status_code == 200
        assert "<strong>Mira-memories.md</strong>: imported as memory file" in answer.text
        assert '<li class="error"><strong>broken.md</strong>:' in answer.text
        assert (site.ws.files_dir / "Mira-memories.md").read_text(encoding="utf-8") == MEMORIES
        assert not (site.ws.files_dir / "broken.md").exists()
        manager = client.get("/memories/Mira")
        assert "Mira keeps a brass compass in her coat." in manager.text
        again = client.post("/import", files=files[:1], headers=csrf)
        assert "<strong>Mira-memories.md</strong>: already there" in again.text
