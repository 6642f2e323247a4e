"""Memory extraction: read new chat messages, ask the model, append what is worth keeping.

Each chunk of messages goes through: clean, build the prompt, call the model,
parse, drop duplicates, append one block, advance the watermark. The last two
are one journalled step (see `ExtractionState`), so a process killed anywhere
leaves neither a duplicate nor a gap when the run is repeated.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from charmemory.core.block_merging import block_to_extend
from charmemory.core.chat.group_joins import heard_from
from charmemory.core.chat_user import chat_user_name
from charmemory.core.existing_memories import (
    Candidate,
    drop_duplicates,
)
from charmemory.core.extraction_answer import (
    TRUNCATED,
    ParsedAnswer,
    answer_in_reasoning,
    merge_blocks,
    parse_answer,
)
from charmemory.core.extraction_settings import (
    ExtractionSettings,
    explain_budget,
    response_budget_hint,
)
from charmemory.core.memory_location import MemoryLocation
from charmemory.core.model_settings import DEFAULT_CONTEXT_SIZE
from charmemory.core.prompt_budget import describe_cuts
from charmemory.core.redaction import without_secrets
from charmemory.core.restatement import news_in, restates, sentences
from charmemory.core.retrieval import Collection
from charmemory.core.triggers import Decision, TriggerState, should_extract
from charmemory.core.watermark import (
    SourceMessage,
    Watermark,
    chunk,
    index_ranges,
    messages_to_extract,
    pending_character_messages,
    reconcile_watermark,
)
from charmemory.errors import CharMemoryError, ConfigError
from charmemory.formats.block_dates import (
    format_block_date,
)
from charmemory.formats.chat import chat_fingerprints
from charmemory.formats.memory_file import (
    append_block,
    append_bullets,
    build_block,
)
from charmemory.ports import (
    ActivityRecorder,
    Character,
    ChatMessage,
    ChatModel,
    ChatRef,
    ExtractionStateStore,
    LoadedChat,
    LoadedMemories,
    NewMemories,
    PendingAppend,
)
from charmemory.services.chunk_prompts import ChunkPrompts
from charmemory.services.extraction_report import (
    ChunkOutcome,
    ExtractionReport,
    Progress,
    UnusableAnswerError,
    no_progress,
)
from charmemory.services.memory_access import MemoryFileAccess
from charmemory.services.prompts import PromptService
from charmemory.services.retrieval import RetrievalService
from charmemory.services.settings import SettingsService

# How many saved bullets the index proposes as related before the token budget cuts.
RELATED_CANDIDATES = 60
# Saved memories nearest a new bullet that are checked for restating it (core/restatement).
RESTATED_CANDIDATES = 3
TEMPERATURE = 0.3


class ExtractionService:
    def __init__(
        self,
        access: MemoryFileAccess,
        state: ExtractionStateStore,
        settings: SettingsService,
        prompts: PromptService,
        *,
        model: Callable[[str], ChatModel],
        log: ActivityRecorder,
        retrieval: Callable[[], RetrievalService | None] = lambda: None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        redact: Callable[[str], str] = lambda text: text,
        context_size: Callable[[str], int] = lambda character: DEFAULT_CONTEXT_SIZE,
    ):
        self._library = access.library
        self._files = access.files
        self._locator = access.locator
        self._state = state
        self._settings = settings
        self._prompts = prompts
        self._log = log
        self._model_factory = model
        self._models: dict[str, ChatModel] = {}
        self._retrieval_factory = retrieval
        self._retrieval: RetrievalService | None = None
        self._retrieval_checked = False
        self._clock = clock
        self._redact = redact  # scrubs API keys from what the model answers
        # The model's context in tokens, for a character (its provider's setting).
        self._context_size = context_size

    # -- settings and places ------------------------------------------------------------

    def settings_for(self, character: Character) -> ExtractionSettings:
        return self._settings.extraction(character.name)

    def location_for(self, character: Character, chat: ChatRef | None) -> MemoryLocation:
        return self._locator.for_chat(character, chat)

    # -- triggers -----------------------------------------------------------------------

    async def on_character_message(
        self, character_name: str, chat_id: str | None = None, *, stop: asyncio.Event | None = None
    ) -> ExtractionReport:
        """The hook a chat engine calls after each new character message (and what
        `extract --auto` and `watch` run): extract when the interval and cooldown allow."""
        character = self._library.character(character_name)
        ref, chosen_because = self._chat(character, chat_id)
        settings = self.settings_for(character)
        loaded = self._library.load_chat(ref)
        decision = self.decide(character, loaded, settings)
        if not decision.run:
            report = self._report(character, ref)
        else:
            report = await self.extract(character.name, ref.id, stop=stop)
        report.decision = decision
        report.chosen_because = chosen_because
        return report

    def decision(self, character_name: str, chat_id: str | None = None) -> Decision:
        """What the automatic trigger would decide for the chat now."""
        character = self._library.character(character_name)
        loaded = self._library.load_chat(self._library.chat(character, chat_id))
        return self.decide(character, loaded, self.settings_for(character))

    def decide(
        self, character: Character, loaded: LoadedChat, settings: ExtractionSettings
    ) -> Decision:
        stored = self._state.chat(character.name, loaded.ref.id)
        sources = source_messages(loaded)
        watermark = self.current_watermark(character, loaded.ref, sources, persist=False)
        trigger = TriggerState(
            count=pending_character_messages(sources, watermark), last_run_at=stored.last_run_at
        )
        return should_extract(trigger, self._clock(), settings)

    def current_watermark(
        self,
        character: Character,
        ref: ChatRef,
        sources: Sequence[SourceMessage],
        *,
        persist: bool,
    ) -> Watermark:
        """The stored watermark, moved to follow its messages through deletions and swipes."""
        stored = Watermark(
            self._state.chat(character.name, ref.id).watermark,
            self._state.fingerprints(character.name, ref.id),
        )
        moved = reconcile_watermark(sources, stored)
        if persist and moved != stored:
            self._state.replace_watermark(
                character.name, ref.id, moved.last_index, dict(moved.fingerprints)
            )
            self._log.record(
                "extract.watermark",
                f"messages were deleted or changed: last extracted message "
                f"{stored.last_index} is now {moved.last_index}",
                character=character.name,
                chat=ref.id,
            )
        return moved

    # -- extraction -----------------------------------------------------------------------

    async def extract(
        self,
        character_name: str,
        chat_id: str | None = None,
        *,
        up_to: int | None = None,
        forced_range: tuple[int, int] | None = None,
        force: bool = False,
        dry_run: bool = False,
        progress: Progress = no_progress,
        stop: asyncio.Event | None = None,
    ) -> ExtractionReport:
        """Extract Now (everything unprocessed), Extract Here (`up_to`) or a range.

        A range over messages already extracted needs `force`: their memories are
        most likely saved already.
        """
        character = self._library.character(character_name)
        ref, chosen_because = self._chat(character, chat_id)
        if not dry_run:
            self._files.require_writable("extract memories")
        self.settle_pending(character)
        settings = self.settings_for(character)
        report = self._report(character, ref)
        report.chosen_because = chosen_because
        with self._state.exclusive(character.name, ref.id):
            loaded = self._library.load_chat(ref)
            sources = source_messages(loaded)
            watermark = self.current_watermark(character, ref, sources, persist=not dry_run)
            if forced_range is not None and not force:
                _check_unprocessed(forced_range, watermark)
            todo = messages_to_extract(sources, watermark, up_to=up_to, forced_range=forced_range)
            chunks = chunk(todo, settings.messages_per_call) if todo else []
            report.planned_messages = len(todo)
            report.planned_chunks = len(chunks)
            self._log.record(
                "extract.collect",
                f"{len(todo)} messages to extract in {len(chunks)} calls",
                character=character.name,
                chat=ref.id,
                data={"messages": index_ranges(m.index for m in todo)},
            )
            progress(report, 0, len(chunks))
            if not chunks:
                return report
            location = self.location_for(character, ref)
            prompts = self._chunk_prompts(character, loaded, settings, location)
            # Nothing a dry run does changes the file: it is read once.
            memories = self._files.load(location.file) if dry_run else None
            for number, part in enumerate(chunks, start=1):
                if stop is not None and stop.is_set():
                    report.stopped = True
                    break
                outcome = await self._extract_chunk(
                    character,
                    loaded,
                    part,
                    settings,
                    report,
                    prompts,
                    location,
                    memories if memories is not None else self._files.load(location.file),
                    dry_run=dry_run,
                )
                report.chunks.append(outcome)
                progress(report, number, len(chunks))
        return report

    def _chunk_prompts(
        self,
        character: Character,
        loaded: LoadedChat,
        settings: ExtractionSettings,
        location: MemoryLocation,
    ) -> ChunkPrompts:
        async def related(memories: LoadedMemories, query: str) -> list[Candidate]:
            await self._sync_with_file(location.bullets, memories)
            return await self._related(location.bullets, query)

        prompts = ChunkPrompts(
            self._prompts.text("extraction"),
            character,
            chat_user_name(loaded.chat),
            settings,
            context_size=self._context_size(character.name),
            related=related,
            members=loaded.ref.group.members if loaded.ref.group else None,
        )
        if prompts.card_cut is not None:
            self._log.record(
                "extract.budget",
                f"the character card is too long for the prompt and was cut: "
                f"{describe_cuts([prompts.card_cut])}",
                level="warning",
                character=character.name,
                chat=loaded.ref.id,
            )
        return prompts

    async def _extract_chunk(
        self,
        character: Character,
        loaded: LoadedChat,
        part: Sequence[SourceMessage],
        settings: ExtractionSettings,
        report: ExtractionReport,
        prompts: ChunkPrompts,
        location: MemoryLocation,
        memories: LoadedMemories,
        *,
        dry_run: bool,
    ) -> ChunkOutcome:
        ref = loaded.ref
        first, last = part[0].index, part[-1].index
        built = await prompts.build(part, memories)
        prompt, recent = built.messages, built.recent
        budget_notes = []
        if built.cuts:
            budget_notes.append(f"cut to fit the prompt: {describe_cuts(built.cuts)}")
            self._log.record(
                "extract.budget",
                f"messages {first}-{last}: too long for the prompt, cut: "
                f"{describe_cuts(built.cuts)}",
                level="warning",
                character=character.name,
                chat=ref.id,
            )
        if dry_run:
            report.prompts.append(prompt)
            return ChunkOutcome(first, last, [], [], budget_notes, nothing_new=False)
        existing = _existing_bullets(memories)
        user_name = chat_user_name(loaded.chat)
        collection = location.bullets
        parsed = await self._ask(
            character,
            ref,
            prompt,
            settings,
            user_name=user_name,
            recent_is_empty=not recent,
            span=(first, last),
        )
        if budget_notes:
            parsed = replace(parsed, warnings=[*budget_notes, *parsed.warnings])
        if not parsed.blocks and not parsed.nothing_new:
            self._state.mark_attempt(character.name, ref.id, self._clock())
            reason = "; ".join(parsed.warnings) or "no memories in the answer"
            self._log.record(
                "extract.unusable",
                f"messages {first}-{last}: the answer held no memories ({reason}); "
                "they stay unprocessed",
                level="warning",
                character=character.name,
                chat=ref.id,
            )
            raise UnusableAnswerError(
                f"the model's answer for messages {first}-{last} held no memories ({reason}); "
                "nothing was saved and those messages will be tried again"
            )
        # One block per chunk, whatever blocks the model wrote (chat and date are ours).
        fresh, near = await self._without_near_duplicates(
            collection, memories, merge_blocks([parsed])
        )
        deduped = drop_duplicates([fresh], existing)
        deduped.dropped[:0] = near
        bullets = [text for block in deduped.blocks for text in block]
        self._append(character, ref, memories, part, bullets, settings)
        self._log.record(
            "extract.saved",
            f"messages {first}-{last}: {len(bullets)} memories saved"
            + (f", {len(deduped.dropped)} duplicates dropped" if deduped.dropped else "")
            + (f", {len(parsed.left_out)} left out" if parsed.left_out else ""),
            level="warning" if parsed.warnings else "info",
            character=character.name,
            chat=ref.id,
            data={
                "saved": bullets,
                "dropped": deduped.dropped,
                "warnings": parsed.warnings,
                **(
                    {"left_out": [{"reason": o.reason, "text": o.text} for o in parsed.left_out]}
                    if parsed.left_out
                    else {}
                ),
            },
        )
        return ChunkOutcome(
            first,
            last,
            bullets,
            deduped.dropped,
            parsed.warnings,
            parsed.nothing_new,
            parsed.left_out,
        )

    async def _ask(
        self,
        character: Character,
        ref: ChatRef,
        prompt: list[ChatMessage],
        settings: ExtractionSettings,
        *,
        user_name: str,
        recent_is_empty: bool,
        span: tuple[int, int],
    ) -> ParsedAnswer:
        if recent_is_empty:
            # Only hidden or markup-only messages: nothing to send, nothing to learn.
            return ParsedAnswer([], nothing_new=True)
        model = self._chat_model(character.name)
        prompt_chars = sum(len(m.content) for m in prompt)
        self._log.record(
            "extract.call",
            f"messages {span[0]}-{span[1]} sent to {model.provider}/{model.model}",
            character=character.name,
            chat=ref.id,
            data={
                "provider": model.provider,
                "model": model.model,
                "prompt_tokens_estimate": -(-prompt_chars // 4),
                **({"prompt": [m.content for m in prompt]} if settings.verbose_log else {}),
            },
        )
        try:
            completion = await model.complete(
                prompt,
                max_tokens=settings.max_response_tokens,
                temperature=TEMPERATURE,
                answer_format=NewMemories(settings.max_bullets, character.name, user_name),
            )
        except CharMemoryError as error:
            failure = explain_budget(error, settings.max_response_tokens)
            self._state.mark_attempt(character.name, ref.id, self._clock())
            self._log.record(
                "extract.error", str(failure), level="error", character=character.name, chat=ref.id
            )
            if failure is error:
                raise
            raise failure from error
        text = completion.text
        # An empty answer may have been given inside the reasoning; only its very end counts.
        from_reasoning = None if text.strip() else answer_in_reasoning(completion.reasoning)
        self._log.record(
            "extract.response",
            f"answer of {len(text)} characters ({completion.finish_reason or 'done'})"
            if from_reasoning is None
            else "the answer was empty; the memories are the ones the model's reasoning "
            f"ended with ({len(from_reasoning)} characters)",
            level="info" if from_reasoning is None else "warning",
            character=character.name,
            chat=ref.id,
            data={
                "prompt_tokens": completion.usage.prompt_tokens,
                "completion_tokens": completion.usage.completion_tokens,
                "reasoning_chars": len(completion.reasoning),
                "finish_reason": completion.finish_reason,
                **({"answer_from": "reasoning"} if from_reasoning is not None else {}),
                **({"response": text} if settings.verbose_log else {}),
            },
        )
        parsed = parse_answer(
            text if from_reasoning is None else from_reasoning,
            max_bullets=settings.max_bullets,
            finish_reason=completion.finish_reason,
            max_bullet_chars=settings.max_bullet_chars,
        )
        if parsed.has_warning(TRUNCATED):
            hint = response_budget_hint(settings.max_response_tokens)
            parsed = replace(
                parsed,
                warnings=[
                    f"{w} ({hint})" if w.startswith(f"{TRUNCATED}:") else w for w in parsed.warnings
                ],
            )
        return self._without_secrets(parsed)

    def _without_secrets(self, parsed: ParsedAnswer) -> ParsedAnswer:
        """The answer less any memory that repeats a key; no warning quotes one either."""
        blocks, dropped = [], []
        for block in parsed.blocks:
            kept, warnings = without_secrets(block, self._redact)
            blocks.append(kept)
            dropped += warnings
        warnings = [self._redact(warning) for warning in parsed.warnings] + dropped
        return replace(parsed, blocks=blocks, warnings=warnings)

    def _append(
        self,
        character: Character,
        ref: ChatRef,
        memories: LoadedMemories,
        part: Sequence[SourceMessage],
        bullets: list[str],
        settings: ExtractionSettings,
    ) -> None:
        """Append a block (or, merging chunks, grow the chat's last block) and advance."""
        now = self._clock()
        block_text = ""
        new_file = None
        if bullets:
            base = memories.memories
            target = (
                block_to_extend(base, ref.id, bullets, max_bullets=settings.max_bullets)
                if settings.merge_chunks
                else None
            )
            if target is None:
                new_file = append_block(base, build_block(ref.id, format_block_date(now), bullets))
                target = new_file.block_count - 1
            else:
                new_file = append_bullets(base, target, bullets)
            block_text = new_file.blocks[target].render()
        pending = self._state.begin_append(
            character.name,
            ref.id,
            file=memories.file,
            block=block_text,
            first_idx=part[0].index,
            last_idx=part[-1].index,
            fingerprints={m.index: m.fingerprint for m in part},
            now=now,
        )
        if new_file is not None:
            try:
                self._files.save(
                    memories,
                    new_file,
                    cause="extraction",
                    detail=f"{ref.id} messages {part[0].index}-{part[-1].index}",
                )
            except BaseException:
                self._state.abandon_append(pending)
                raise
        self._state.commit_append(pending, now=now)

    # -- recovery -----------------------------------------------------------------------------

    def settle_pending(self, character: Character) -> None:
        """Finish or discard appends that a killed process left half-done."""
        for pending in self._state.pending(character.name):
            if self._block_landed(pending):
                self._state.commit_append(pending, now=self._clock())
                outcome = "finished"
            else:
                self._state.abandon_append(pending)
                outcome = "discarded (the messages will be extracted again)"
            self._log.record(
                "extract.recover",
                f"an interrupted append of messages {pending.first_idx}-{pending.last_idx} "
                f"was {outcome}",
                level="warning",
                character=pending.character,
                chat=pending.chat,
            )

    def _block_landed(self, pending: PendingAppend) -> bool:
        if not pending.block:
            return True
        return pending.block in self._files.load(pending.file).memories.render()

    # -- related memories (the retrieval index, when the embedding model is there) -------

    async def _sync_with_file(self, collection: Collection, memories: LoadedMemories) -> None:
        """Make the index hold the file's memories as they are now (none, when the file
        was emptied or deleted), so related memories and duplicates are only ever
        memories that exist."""
        retrieval = self._retrieval_service()
        if retrieval is not None:
            await retrieval.sync_file(collection, memories.file, memories.memories)

    async def _related(self, collection: Collection, recent: str) -> list[Candidate]:
        """Saved bullets most related to the chunk, best first; [] without an index."""
        retrieval = self._retrieval_service()
        if retrieval is None or not recent:
            return []
        results = await retrieval.search(collection, recent, RELATED_CANDIDATES, record=False)
        return [
            Candidate(r.text, r.provenance.block_index, r.block_date, r.provenance.bullet_index)
            for r in results
        ]

    async def _without_near_duplicates(
        self, collection: Collection, memories: LoadedMemories, bullets: list[str]
    ) -> tuple[list[str], list[str]]:
        """Split new bullets into (kept, restatements of a saved memory).

        Each sentence of a bullet is judged on its own: a bullet that joins saved memories
        is a restatement, and one that adds a sentence to them keeps only that sentence.
        """
        retrieval = self._retrieval_service()
        if retrieval is None or not bullets:
            return bullets, []
        # The prompt may have been built without the index (every memory fitted).
        await self._sync_with_file(collection, memories)
        parts = {bullet: sentences(bullet) or [bullet.strip()] for bullet in bullets}
        asked = list(dict.fromkeys(part for found in parts.values() for part in found))
        restated = {
            result.query: any(restates(result.query, r.text, r.cosine) for r in result.results)
            for result in await retrieval.retrieve_many(
                collection, asked, RESTATED_CANDIDATES, record=False
            )
        }
        kept, near = [], []
        for bullet in bullets:
            news = news_in(parts[bullet], [restated[part] for part in parts[bullet]])
            if len(news) == len(parts[bullet]):
                kept.append(bullet.strip())
                continue
            near.append(" ".join(part for part in parts[bullet] if part not in news))
            if news:
                kept.append(" ".join(news))
        return kept, near

    def _retrieval_service(self) -> RetrievalService | None:
        if not self._retrieval_checked:
            self._retrieval = self._retrieval_factory()
            self._retrieval_checked = True
        return self._retrieval

    def _chat_model(self, character: str) -> ChatModel:
        """The model that extracts ``character``'s memories (`extraction.source` says which)."""
        if character not in self._models:
            self._models[character] = self._model_factory(character)
        return self._models[character]

    def _chat(self, character: Character, chat_id: str | None) -> tuple[ChatRef, str]:
        """The chat named, or the latest with why it is the latest."""
        if chat_id is not None:
            return self._library.chat(character, chat_id), ""
        latest = self._library.latest_chat(character)
        if latest is None:
            return self._library.chat(character), ""  # raises: no chats yet
        return latest.ref, latest.reason

    def _report(self, character: Character, ref: ChatRef) -> ExtractionReport:
        return ExtractionReport(character.name, ref.id, self.location_for(character, ref).file)


def source_messages(loaded: LoadedChat) -> list[SourceMessage]:
    """The chat as extraction reads it for the ref's character.

    A group member who joined after the chat began did not hear what came before:
    those messages are hidden from its extraction.
    """
    fingerprints = chat_fingerprints(loaded.chat)
    group = loaded.ref.group
    heard = heard_from(group.joined, fingerprints) if group is not None else 0
    return [
        SourceMessage(
            index=index,
            is_user=message.is_user,
            text=message.active_text,
            fingerprint=fingerprints[index],
            is_hidden=message.is_hidden or index < heard,
            name=message.name or "",
        )
        for index, message in enumerate(loaded.chat.messages)
    ]


def _check_unprocessed(span: tuple[int, int], watermark: Watermark) -> None:
    first, last = span
    if first <= watermark.last_index:
        done = f"{first}-{min(last, watermark.last_index)}"
        raise ConfigError(
            f"messages {done} were already extracted (up to {watermark.last_index}); "
            "add --force to extract them again"
        )


def _existing_bullets(memories: LoadedMemories) -> list[str]:
    return [bullet.text for block in memories.memories.blocks for bullet in block.bullets]
