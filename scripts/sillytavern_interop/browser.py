"""What STMB shows of the narrator chat in SillyTavern, read in headless Chromium.

The path is a user's: SillyTavern opens on its welcome page, the chat is picked
from "Recent Chats", STMB's drawer and settings are opened with clicks. Before
the chat is opened STMB's manual lorebook mode is switched on the way STMB's own
checkbox does it (the setting, then a settings save): STMB keeps that switch for
all chats, and its settings window, opened while the switch is off, would turn the
chat's narrator mode off before anything of it could be read as written.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scripts.sillytavern_interop.checks import Checks
from scripts.sillytavern_interop.entries import compare_entry, memories
from scripts.sillytavern_interop.scenario import (
    SCENE_CONTENT,
    Written,
    read_cast,
    show_book,
)
from tests.support.scripted_llm import RecordedRequest, ScriptedLLMServer, Step, openai_completion

VIEWPORT = {"width": 1400, "height": 900}
TIMEOUT_MS = 60_000
DRAWER = "#stmb-narrator-cast-drawer"
USER_TURN = "The fog thickens over the harbor."
REPLY = "Kestrel pours a drink as the fog thickens."
STMB_SCENE_TITLE = "Drinks in the fog"
STMB_SCENE = json.dumps(
    {"title": STMB_SCENE_TITLE, "content": "- Kestrel poured a drink.", "keywords": ["drink"]}
)
STMB_FIELDS = ("STMB_", "stmemorybooks", "group", "comment", "content", "uid")


def check_in_browser(
    url: str, written: Written, user: Path, evidence: Path, checks: Checks, chromium: str
) -> None:
    """Each step in turn; one that cannot finish (a wait that times out) is a failed
    check, and the steps after it, which build on it, are not taken."""
    from playwright.sync_api import sync_playwright

    before = written.chat_lines()
    errors: list[str] = []
    with ScriptedLLMServer() as model, sync_playwright() as playwright:
        model.respond_always(_role_play)
        _prepare_settings(user, model.base_url)
        browser = playwright.chromium.launch(
            executable_path=chromium, headless=True, args=["--no-sandbox"]
        )
        page = browser.new_page(viewport=VIEWPORT)
        page.set_default_timeout(TIMEOUT_MS)
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
        shot = _shooter(page, evidence)
        steps: list[tuple[str, Callable[[], None]]] = [
            ("open the narrator chat", lambda: _open(page, url, user, written, shot)),
            ("read the chat as loaded", lambda: _check_loaded_state(page, before, checks)),
            ("read the drawer", lambda: _check_drawer(page, written, checks, shot)),
            ("read STMB's settings", lambda: _check_settings_and_cast(page, written, checks, shot)),
            ("read the books", lambda: _check_books(page, written, user, checks, shot)),
            ("swipe back", lambda: _check_swipe_restores_cast(page, written, checks, shot)),
            ("read the saved chat", lambda: _check_saved_chat(before, written, checks)),
            ("take a turn", lambda: _check_stmb_generation(page, model, written, checks, shot)),
            ("STMB's scene", lambda: _check_stmb_scene_memory(page, written, user, checks, shot)),
            ("open the branch", lambda: _check_branch(page, written, user, checks, shot)),
        ]  # fmt: skip
        for name, step in steps:
            try:
                step()
            except Exception as error:  # a timeout or a missing element: the check fails
                shot(f"failed-{name.replace(' ', '-')}")
                checks.record(f"in SillyTavern: {name}", False, str(error).splitlines()[0])
                break
        browser.close()
    shown = show_book(user, written.books[1])
    checks.record(
        "charmemory lists STMB's memory as a copy in Kestrel's book",
        f"002 - {STMB_SCENE_TITLE} [memory 5-6, copy of {written.books[0]}]" in shown,
        shown,
    )
    checks.equal(
        "charmemory reads the active cast SillyTavern saved",
        read_cast(user, written.chat_id),
        {"Kestrel": (False, True), "Vell": (True, False), "Dorran": (False, False)},
    )
    stmb_errors = [e for e in errors if "STMemoryBooks" in e or "MemoryBooks" in e]
    checks.equal("STMB logged no errors", stmb_errors, [])


def _open(page: Any, url: str, user: Path, written: Written, shot: Callable) -> None:
    page.goto(url)
    _dismiss_stmb_notice(page)
    _turn_on_manual_mode(page, user)
    page.reload()
    _open_chat(page, written.chat_id)
    shot("01-narrator-chat-open")


def _prepare_settings(user: Path, model_url: str) -> None:
    """A user past SillyTavern's first-run page (it holds the character list back), with
    an OpenAI-compatible connection to the scripted model, connected at start."""
    path = user / "settings.json"
    settings = json.loads(path.read_text(encoding="utf-8"))
    settings["firstRun"] = False
    settings["main_api"] = "openai"
    settings["power_user"]["auto_connect"] = True
    settings["oai_settings"].update(
        chat_completion_source="custom",
        custom_url=model_url,
        custom_model="scripted",
        stream_openai=False,
    )
    path.write_text(json.dumps(settings, indent=4), encoding="utf-8")


def _role_play(request: RecordedRequest) -> Step:
    if request.path.endswith("/models"):
        return Step(json={"object": "list", "data": [{"id": "scripted", "object": "model"}]})
    asked = request.json["messages"][-1]["content"]
    return Step(json=openai_completion(STMB_SCENE if "JSON" in asked else REPLY))


def _shooter(page: Any, evidence: Path) -> Callable[[str], None]:
    def shot(name: str) -> None:
        time.sleep(0.5)  # let toasts and popups finish their animation
        page.screenshot(path=str(evidence / f"{name}.png"))

    return shot


def _dismiss_stmb_notice(page: Any) -> None:
    """STMB's one-time note that the optional Chat Top Bar extension is missing."""
    notice = page.locator("dialog", has_text="Chat Top Bar")
    page.wait_for_function("() => window.SillyTavern?.getContext().extensionSettings.STMemoryBooks")
    try:
        notice.wait_for(timeout=15_000)
    except Exception:  # not shown: nothing to dismiss
        return
    notice.get_by_text("Dismiss and never show").click()
    notice.get_by_role("button", name="OK").click()
    notice.wait_for(state="detached")


def _turn_on_manual_mode(page: Any, user: Path) -> None:
    page.evaluate(
        """() => {
            const context = SillyTavern.getContext();
            context.extensionSettings.STMemoryBooks.moduleSettings.manualModeEnabled = true;
            context.saveSettingsDebounced();
        }"""
    )
    _wait_for(
        lambda: (
            json.loads((user / "settings.json").read_text(encoding="utf-8"))["extension_settings"]
            .get("STMemoryBooks", {})
            .get("moduleSettings", {})
            .get("manualModeEnabled")
        ),
        "SillyTavern saving STMB's manual lorebook mode",
    )


def _open_chat(page: Any, chat_id: str) -> None:
    page.locator(f".recentChat[data-file={json.dumps(chat_id)}]").click()
    page.wait_for_function("id => SillyTavern.getContext().getCurrentChatId() === id", arg=chat_id)
    page.wait_for_selector(".mes.last_mes")


def _check_loaded_state(page: Any, before: list[dict], checks: Checks) -> None:
    loaded = page.evaluate(
        """() => {
            const context = SillyTavern.getContext();
            return {
                state: context.chatMetadata.STMemoryBooks,
                extras: context.chat.map(m => m.extra?.STMemoryBooks ?? null),
                swipes: context.chat.map(m => (m.swipe_info || []).map(
                    i => i.extra?.STMemoryBooks ?? null)),
            };
        }"""
    )
    written_state = before[0]["chat_metadata"]["STMemoryBooks"]
    checks.equal(
        "SillyTavern loads the chat's cast as written",
        loaded["state"]["narratorMode"],
        written_state["narratorMode"],
    )
    checks.equal(
        "SillyTavern loads the omniscient book as the manual book",
        loaded["state"]["manualLorebook"],
        written_state["manualLorebook"],
    )
    checks.equal(
        "SillyTavern loads every message's stamp",
        loaded["extras"],
        [m["extra"].get("STMemoryBooks") for m in before[1:]],
    )
    checks.equal(
        "SillyTavern loads every swipe's stamp",
        [[stamp for stamp in swipes if stamp] for swipes in loaded["swipes"]],
        swipe_stamps(before),
    )


def _drawer_members(page: Any) -> list[tuple[str, bool]]:
    return [
        tuple(row)
        for row in page.evaluate(
            """selector => [...document.querySelectorAll(`${selector} label`)].map(label =>
                [label.innerText.trim(), label.querySelector('input').checked])""",
            DRAWER,
        )
    ]


def _check_drawer(page: Any, written: Written, checks: Checks, shot: Callable) -> None:
    drawer = page.locator(DRAWER)
    drawer.wait_for()
    checks.equal("STMB shows its active-cast drawer (collapsed: one active)",
                 drawer.inner_text().strip(), "1")  # fmt: skip
    shot("02-active-cast-drawer-collapsed")
    drawer.locator(".stmb-narrator-cast-expand").click()
    page.wait_for_selector(f"{DRAWER} .stmb-narrator-cast-list")
    checks.equal(
        "STMB's drawer: the non-retired members, Dorran active",
        _drawer_members(page),
        [("Kestrel", False), ("Dorran", True)],
    )
    shot("03-active-cast-drawer")


def _check_settings_and_cast(page: Any, written: Written, checks: Checks, shot: Callable) -> None:
    page.locator("#extensionsMenuButton").click()
    page.locator("#stmb-menu-item").click()
    popup = page.locator("dialog", has=page.locator("#stmb-narrator-mode-enabled"))
    popup.wait_for()
    checks.equal("STMB: manual lorebook mode on",
                 page.locator("#stmb-manual-mode-enabled").is_checked(), True)  # fmt: skip
    checks.equal("STMB: narrator mode on for this chat",
                 page.locator("#stmb-narrator-mode-enabled").is_checked(), True)  # fmt: skip
    config = popup.inner_text()
    checks.record(
        "STMB: the omniscient book is the chat's manual lorebook",
        f"Active Lorebook:\n{written.books[0]}" in config,
        "" if written.books[0] in config else config[:400],
    )
    manage = page.locator("#stmb-manage-narrator-cast")
    checks.equal("STMB: two members in the cast button", " ".join(manage.inner_text().split()),
                 "Manage Narrator Cast (2)")  # fmt: skip
    manage.scroll_into_view_if_needed()
    shot("04-stmb-settings-narrator-mode")
    manage.click()
    rows = page.locator(".stmb-narrator-manager-row")
    rows.first.wait_for()
    found = [tuple(r.split("\n")) for r in rows.all_inner_texts()]
    checks.equal(
        "STMB's cast manager: every member with their book, Vell to restore",
        [tuple(part.strip() for part in row if part.strip()) for row in found],
        [
            ("Kestrel", "Kestrel's memories", "Remove"),
            ("Vell", "Vell's memories", "Restore"),
            ("Dorran", "Dorran's memories", "Remove"),
        ],
    )
    shot("05-stmb-narrator-cast-manager")
    page.keyboard.press("Escape")
    rows.first.wait_for(state="detached")
    page.keyboard.press("Escape")
    popup.wait_for(state="detached")


def _check_books(page: Any, written: Written, user: Path, checks: Checks, shot: Callable) -> None:
    for name in written.books:
        loaded = page.evaluate("name => SillyTavern.getContext().loadWorldInfo(name)", name)
        on_disk = json.loads((user / "worlds" / f"{name}.json").read_text(encoding="utf-8"))
        checks.equal(
            f"SillyTavern loads the memory entries of {name!r} with their STMB fields",
            _memory_fields(loaded),
            _memory_fields(on_disk),
        )
    page.locator("#WIDrawerIcon").click()
    for name, label in (
        (written.books[0], "06-omniscient-book"),
        (written.books[2], "07-vell-book"),
    ):
        page.locator("#world_editor_select").select_option(label=name)
        page.wait_for_selector("#world_popup_entries_list .world_entry")
        shot(label)
    page.locator("#WIDrawerIcon").click()


def _memory_fields(book: dict) -> list[dict]:
    return [
        {k: v for k, v in entry.items() if k.startswith(STMB_FIELDS)}
        for entry in book["entries"].values()
        if entry.get("stmemorybooks")
    ]


def _check_swipe_restores_cast(page: Any, written: Written, checks: Checks, shot: Callable) -> None:
    page.locator(".mes.last_mes .swipe_left").click()
    page.wait_for_function("() => SillyTavern.getContext().chat.at(-1).swipe_id === 0")
    page.wait_for_function(
        """selector => [...document.querySelectorAll(`${selector} input:checked`)]
            .map(i => i.parentElement.innerText.trim()).join() === 'Kestrel'""",
        arg=DRAWER,
    )
    checks.equal(
        "STMB restores the active cast from the swipe's stamp",
        _drawer_members(page),
        [("Kestrel", True), ("Dorran", False)],
    )
    shot("08-swiped-back-cast-restored")
    _wait_for(
        lambda: (
            written.chat_lines()[0]["chat_metadata"]["STMemoryBooks"]["narratorMode"][
                "activeCastIds"
            ]
            == written.stamp("Kestrel")
        ),
        "SillyTavern saving the chat after the swipe",
    )


def _check_stmb_generation(
    page: Any, model: ScriptedLLMServer, written: Written, checks: Checks, shot: Callable
) -> None:
    """A turn in SillyTavern: STMB stamps it and reads the active members' books."""
    page.wait_for_function("() => SillyTavern.getContext().onlineStatus !== 'no_connection'")
    count = len(written.chat_lines())
    page.locator("#send_textarea").fill(USER_TURN)
    page.locator("#send_but").click()
    _wait_for(
        lambda: (
            len(lines := written.chat_lines()) == count + 2
            and "STMemoryBooks" in lines[-1]["extra"]
        ),
        "SillyTavern saving the turn STMB stamped",
    )
    shot("09-turn-written-in-sillytavern")
    *_, user_turn, reply = written.chat_lines()
    stamp = {"narratorCast": {"version": 1, "memberIds": written.stamp("Kestrel")}}
    checks.equal("STMB stamps the user's turn as charmemory does",
                 user_turn["extra"].get("STMemoryBooks"), stamp)  # fmt: skip
    checks.equal(
        "STMB stamps the reply and its swipe as charmemory does",
        [reply["extra"].get("STMemoryBooks"), *swipe_stamps([{}, reply])[0]],
        [stamp, stamp],
    )
    [request] = [r for r in model.requests if r.path.endswith("/chat/completions")]
    prompt = json.dumps(request.json["messages"], ensure_ascii=False)
    read = [name for name in written.books if f"{name} belongs to the harbor story." in prompt]
    checks.equal("STMB gives the reply the active member's book alone", read, [written.books[1]])
    checks.record(
        "STMB gives the reply the linked copy charmemory wrote in Kestrel's book",
        SCENE_CONTENT in prompt,
    )


def _check_stmb_scene_memory(
    page: Any, written: Written, user: Path, checks: Checks, shot: Callable
) -> None:
    """STMB writes the scene of the turn: the same entries, in the same shape, as ours."""
    page.locator("#send_textarea").fill("/scenememory 5-6")
    page.locator("#send_but").click()

    def book(name: str) -> dict[str, Any]:
        return json.loads((user / "worlds" / f"{name}.json").read_text(encoding="utf-8"))

    def written_by_stmb(name: str) -> list[dict[str, Any]]:
        return [entry for entry in memories(book(name)) if entry.get("STMB_start") == 5]

    _wait_for(
        lambda: written_by_stmb(written.books[0]) and written_by_stmb(written.books[1]),
        "STMB writing the scene memory of messages 5-6",
    )
    shot("10-stmb-wrote-scene-memory")
    [canonical], [copy] = written_by_stmb(written.books[0]), written_by_stmb(written.books[1])
    checks.equal(
        "STMB copies its scene to the active member's book alone",
        [name for name in written.books[1:] if written_by_stmb(name)],
        [written.books[1]],
    )
    kestrel = written.stamp("Kestrel")
    checks.equal(
        "STMB's canonical entry: the participant ids charmemory would write",
        canonical["STMB_narratorParticipantIds"],
        kestrel,
    )
    checks.equal(
        "STMB's copy: the owner id and canonical link charmemory would write",
        [copy["STMB_narratorOwnerIds"], copy["STMB_canonicalEntryUid"]],
        [kestrel, canonical["uid"]],
    )
    [ours_canonical] = [e for e in memories(book(written.books[0])) if e["STMB_start"] == 1]
    [ours_copy] = [e for e in memories(book(written.books[1])) if e["STMB_start"] == 1]
    compare_entry("canonical entry", canonical, ours_canonical, checks)
    compare_entry("linked copy", copy, ours_copy, checks)


def _check_branch(page: Any, written: Written, user: Path, checks: Checks, shot: Callable) -> None:
    """charmemory's branch opens with its copies bound, and STMB copies nothing again."""
    worlds = sorted(path.name for path in (user / "worlds").iterdir())
    page.locator("#options_button").click()
    page.locator("#option_select_chat").click()
    page.locator(".select_chat_block_filename", has_text=written.branch_id).first.click()
    page.wait_for_function(
        "id => SillyTavern.getContext().getCurrentChatId() === id", arg=written.branch_id
    )
    page.wait_for_selector(f"{DRAWER} .stmb-narrator-cast-list")
    checks.equal(
        "the branch in STMB's drawer: the cast as it was at message 4",
        _drawer_members(page),
        [("Kestrel", False), ("Dorran", True)],
    )
    copies = [f"{name} Branch 1" for name in written.books]
    page.locator("#extensionsMenuButton").click()
    page.locator("#stmb-menu-item").click()
    popup = page.locator("dialog", has=page.locator("#stmb-narrator-mode-enabled"))
    popup.wait_for()
    checks.record(
        "the branch in STMB: the omniscient book's copy is its manual lorebook",
        f"Active Lorebook:\n{copies[0]}" in popup.inner_text(),
    )
    page.locator("#stmb-manage-narrator-cast").click()
    rows = page.locator(".stmb-narrator-manager-row")
    rows.first.wait_for()
    books = [[p.strip() for p in row.split("\n") if p.strip()][1] for row in rows.all_inner_texts()]
    checks.equal("the branch in STMB's cast manager: each member's book copy", books, copies[1:])
    shot("11-branch-cast-manager")
    page.keyboard.press("Escape")
    rows.first.wait_for(state="detached")
    page.keyboard.press("Escape")
    popup.wait_for(state="detached")
    checks.equal(
        "STMB copies no book again for charmemory's branch",
        sorted(path.name for path in (user / "worlds").iterdir()),
        worlds,
    )


def _check_saved_chat(before: list[dict], written: Written, checks: Checks) -> None:
    after = written.chat_lines()
    expected = dict(before[0]["chat_metadata"]["STMemoryBooks"]["narratorMode"])
    expected["activeCastIds"] = written.stamp("Kestrel")
    checks.equal(
        "the chat SillyTavern saved keeps the cast (only the active cast changed)",
        after[0]["chat_metadata"]["STMemoryBooks"]["narratorMode"],
        expected,
    )
    checks.equal(
        "the chat SillyTavern saved keeps every swipe's stamp",
        swipe_stamps(after),
        swipe_stamps(before),
    )
    stamps = [m["extra"].get("STMemoryBooks") for m in before[1:]]
    stamps[-1] = {"narratorCast": {"version": 1, "memberIds": written.stamp("Kestrel")}}
    checks.equal(
        "the chat SillyTavern saved: each message's stamp, the last one's from its swipe 0",
        [m["extra"].get("STMemoryBooks") for m in after[1:]],
        stamps,
    )


def swipe_stamps(lines: list[dict]) -> list[list[dict]]:
    """Each message's swipe stamps (SillyTavern gives a greeting an unstamped swipe)."""
    return [
        [info["extra"]["STMemoryBooks"] for info in message.get("swipe_info", [])
         if "STMemoryBooks" in (info.get("extra") or {})]
        for message in lines[1:]
    ]  # fmt: skip


def _wait_for(condition: Callable[[], Any], what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.25)
    raise RuntimeError(f"timed out waiting for {what}")
