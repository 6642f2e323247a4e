"""`charmemory diagnose`: what a character was given with a reply, and why."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, Any

import typer

from charmemory.cli.application import app, state
from charmemory.cli.retrieval_cmds import CharacterArg, ChatOption, unit
from charmemory.formats.memory_file import (
    stray_tag_warning,
)

if TYPE_CHECKING:
    from charmemory.core.chat.diagnostics import GenerationRecord
    from charmemory.ports import RetrievalRecord, SyncReport
    from charmemory.services.memory_search import Diagnosis


@app.command()
def diagnose(
    character: CharacterArg,
    chat: ChatOption = None,
    generation: Annotated[
        int | None, typer.Option("--generation", help="That generation (default: the last).")
    ] = None,
    raw: Annotated[bool, typer.Option("--raw", help="Also print the prompt as sent.")] = False,
) -> None:
    """What the character was given, and why: memories, lorebooks, the prompt, the index."""
    app_ = state.app()
    found = asyncio.run(app_.memory_search.diagnose(character, chat))
    for line in _diagnosis(found):
        typer.echo(line)
    chat_id = found.located.chat.id if found.located.chat else chat
    if chat_id is None and app_.library.latest_chat(found.located.character) is None:
        return
    chats = app_.chat
    records = (
        [chats.generation(character, generation, chat_id)]
        if generation is not None
        else chats.generations(character, chat_id)
    )
    if not records:
        typer.echo("last generation: none yet (charmemory say or chat)")
        return
    for line in generation_lines(records[0], raw=raw):
        typer.echo(line)


def _diagnosis(found: Diagnosis) -> list[str]:
    located, memories = found.located, found.loaded
    collection = located.location.collection
    lines = [
        f"character: {located.character.name}"
        + (f", chat {located.chat.id}" if located.chat else "")
    ]
    if not memories.exists:
        lines.append(f"memory file: {memories.file} (none yet)")
    else:
        lines.append(
            f"memory file: {memories.file} ({memories.size:,} bytes, "
            f"{memories.memories.block_count} blocks, {memories.memories.bullet_count} bullets)"
        )
        if warning := stray_tag_warning(memories.memories):
            lines.append(f"  warning: {warning}")
    lines.append(f"granularity: {found.settings.granularity}; collection {collection.name}")
    if found.stats is None:
        lines.append(f"index: not built yet (charmemory index {located.character.name!r})")
    else:
        stats = found.stats
        lines.append(
            f"index: {unit(collection, stats.items)}, {stats.model} "
            f"({stats.dimensions} dimensions), updated {stats.updated_at}"
        )
        if found.plan is not None:
            lines.append("  " + _plan_text(found.plan))
    lines.extend(_record_lines(found.last))
    return lines


def _plan_text(plan: SyncReport) -> str:
    if plan.reembedded_all:
        return f"indexed with another model: {plan.embedded:,} items will be embedded again"
    if not (plan.added or plan.removed):
        return "in step with the memory file"
    return (
        f"behind the memory file: {plan.added:,} to embed, {plan.removed:,} to remove "
        "(the next index, search or inject catches up)"
    )


def _record_lines(record: RetrievalRecord | None) -> list[str]:
    if record is None:
        return ["last retrieval: none yet"]
    injected = [c for c in record.candidates if c.get("injected")]
    lines = [
        f"last retrieval: {record.at}, {len(record.candidates)} candidates, "
        f"{len(injected)} injected",
        "  query: " + record.query.replace("\n", " / "),
    ]
    ranked = sorted(record.candidates, key=lambda c: -(c.get("score") or -1.0))
    for candidate in ranked[:10]:
        lines.append(_candidate_line(candidate))
    lines.append("  injected text:" if record.injected else "  injected text: (nothing)")
    lines.extend(f"    {line}" for line in record.injected.splitlines())
    return lines


def _candidate_line(candidate: dict[str, Any]) -> str:
    score = candidate.get("score")
    scored = "-" if score is None else f"{score:.3f}"
    bm25 = candidate.get("bm25")
    lexical = "-" if bm25 is None else f"{bm25:.2f} (#{candidate.get('bm25_rank')})"
    mark = "*" if candidate.get("injected") else " "
    text = str(candidate.get("text") or "").replace("\n", " ")
    return (
        f"  {mark} score {scored}  cosine {candidate['cosine']:.3f} "
        f"(#{candidate['vector_rank']})  bm25 {lexical}  {text[:80]}"
    )


def _lore_label(entry: dict[str, Any]) -> str:
    """`Book#3 001 - Dawn [memory 10-25]`: an entry, marked when it is a scene memory."""
    label = f"{entry['book']}#{entry['uid']} {entry['comment']}"
    memory = entry.get("memory")
    if not memory:
        return label
    scene = memory.get("range")
    mark = memory["tier"] + (f" {scene[0]}-{scene[1]}" if scene else "")
    if memory.get("canonical") is False:
        mark += ", linked copy"
    return f"{label} [{mark}]"


SHOWN_KEYS = 40  # a book's keys listed without --raw


def _keys_text(keys: list[str], *, everything: bool) -> str:
    if not keys:
        return "(none: its entries activate otherwise)"
    shown = keys if everything else keys[:SHOWN_KEYS]
    more = len(keys) - len(shown)
    return ", ".join(shown) + (f" (+{more} more, all with --raw)" if more else "")


def generation_lines(record: GenerationRecord, *, raw: bool) -> list[str]:
    """One generation: model, tokens by section, memories, lorebooks, World Info, prompt."""
    tokens = record.tokens
    lines = [
        f"generation {record.number} of chat {record.chat} ({record.kind}, {record.at}): "
        f"{record.model}, {tokens.get('total')} prompt tokens of {tokens.get('budget')}, "
        f"finish {record.finish_reason or '-'}",
        "  tokens by section: "
        + ", ".join(f"{name} {count}" for name, count in tokens.get("sections", {}).items()),
        "  timings: " + ", ".join(f"{k} {v}" for k, v in record.timings.items() if v is not None),
    ]
    if record.error:
        lines.append(f"  not saved: {record.error}")
    dropped = tokens.get("dropped_message_ids") or []
    if dropped:
        lines.append(f"  {len(dropped)} older chat messages left out for room (0-{max(dropped)})")
    lines.append(
        f"  memories injected ({len(record.memories)}), query: "
        + record.memory_query.replace("\n", " / ")[:120]
    )
    lines.extend(f"    {m['score']:.3f}  {m['text']}" for m in record.memories)
    lines.append(f"  lorebooks ({len(record.lorebooks)}):")
    for book in record.lorebooks:
        lines.append(f"    {book['name']} ({book['source']}, {book['entries']} entries)")
        if "keys" in book:  # records kept before keys were have none
            lines.append("      keys: " + _keys_text(book["keys"], everything=raw))
    lines.extend(f"    {name} (missing: no such book)" for name in record.missing_lorebooks)
    active = [e for e in record.world_info if e["activated"]]
    used = [e for e in active if e.get("memory")]
    lines.append(
        f"  world info: {len(active)} of {len(record.world_info)} entries activated"
        + (f", {len(used)} of them memory-book entries" if used else "")
    )
    lines.extend(f"    + {_lore_label(e)}: {e['why']}" for e in active)
    lines.extend(
        f"    - {_lore_label(e)}: {e['why']}" for e in record.world_info if not e["activated"]
    )
    if raw:
        for message in record.prompt:
            lines.append(f"--- {message['role']} ({', '.join(message['sections'])}) ---")
            lines.append(message["content"])
        lines.append("--- reply ---")
        lines.append(record.reply)
    return lines
