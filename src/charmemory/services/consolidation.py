"""Consolidation: the model merges duplicate and related memories, the user decides.

`preview` reads the selected blocks, has the model consolidate them chunk by chunk
(each call fits the context budget), and stores the outcome with a structured diff;
nothing is written. `apply` writes a stored preview, unless the memory file changed
since the preview was made. An unusable answer rejects the whole preview.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from charmemory.core.consolidation_answer import (
    ProposedBlock,
    UnusableConsolidationError,
    read_consolidation,
)
from charmemory.core.consolidation_diff import (
    ConsolidationPreview,
    consolidation_diff,
    review_warnings,
)
from charmemory.core.consolidation_merge import consolidated_file
from charmemory.core.consolidation_plan import SourceBlock, plan_chunks, select_blocks
from charmemory.core.consolidation_prompt import (
    CONSERVATIVE,
    answer_allowance,
    call_tokens,
    check_context_budget,
    consolidation_messages,
)
from charmemory.core.memory_history import CONSOLIDATION
from charmemory.core.redaction import without_secrets
from charmemory.errors import CharMemoryError, ConflictError, NotFoundError
from charmemory.formats.memory_file import (
    parse_memory_file,
)
from charmemory.ports import (
    ActivityRecorder,
    Character,
    ChatMessage,
    ChatModel,
    ConsolidatedMemories,
    Level,
    PreviewRepository,
)
from charmemory.services.memory_access import MemoryFileAccess
from charmemory.services.prompts import PromptService
from charmemory.services.settings import SettingsService

TEMPERATURE = 0.2


@dataclass(frozen=True)
class Applied:
    preview: ConsolidationPreview
    version: int | None  # the history version recorded
    warnings: tuple[str, ...] = ()


class ConsolidationService:
    def __init__(
        self,
        access: MemoryFileAccess,
        previews: PreviewRepository,
        prompts: PromptService,
        settings: SettingsService,
        *,
        model: Callable[[], ChatModel],
        log: ActivityRecorder | None = None,
        redact: Callable[[str], str] = lambda text: text,
    ):
        self._access = access
        self._previews = previews
        self._prompts = prompts
        self._settings = settings
        self._model_factory = model
        self._model: ChatModel | None = None
        self._log = log
        self._redact = redact  # scrubs API keys from what the model answers

    def context_budget(self, override: int | None = None) -> int:
        """Tokens one call may use, prompt and answer together."""
        if override is not None:
            return check_context_budget(override)
        return int(self._settings.value("consolidation.context_tokens"))

    # -- preview and apply ---------------------------------------------------------------

    async def preview(
        self,
        character_name: str,
        *,
        strategy: str = CONSERVATIVE,
        blocks: Sequence[int] | None = None,
        chats: Sequence[str] | None = None,
        chat: str | None = None,
        context_tokens: int | None = None,
    ) -> ConsolidationPreview:
        """Consolidate the selected blocks (all by default) into a stored preview."""
        instructions = self._prompts.text("consolidation", strategy)
        budget = self.context_budget(context_tokens)
        located, loaded = self._access.load(character_name, chat)
        character = located.character
        selected = select_blocks(loaded.memories, indices=blocks, chats=chats)
        count = sum(len(block.bullets) for block in selected)
        if count < 2:
            raise CharMemoryError(
                f"nothing to consolidate: the selection holds {count} "
                f"memor{'y' if count == 1 else 'ies'}"
            )

        def fits(chunk: Sequence[SourceBlock]) -> bool:
            messages = consolidation_messages(instructions, character.name, chunk)
            return call_tokens(messages, chunk) <= budget

        chunks = plan_chunks(selected, fits)
        proposed: list[ProposedBlock] = []
        for number, chunk in enumerate(chunks, start=1):
            where = f"call {number} of {len(chunks)}"
            proposed += await self._consolidate(character, instructions, chunk, where)
        proposed, secret_warnings = self._without_secrets(proposed)
        diff = consolidation_diff(selected, proposed)
        result = consolidated_file(loaded.memories, {block.index for block in selected}, proposed)
        preview = self._previews.add(
            character=character.name,
            file=loaded.file,
            digest=loaded.version.digest,
            strategy=strategy,
            blocks=sorted({block.index for block in selected}),
            diff=diff,
            result=result.render(),
            warnings=[*review_warnings(strategy, diff), *secret_warnings],
            calls=len(chunks),
        )
        self._record(
            "consolidate.preview",
            f"preview {preview.id} ({strategy}): {diff.bullets_before} memories would become "
            f"{diff.bullets_after} in {len(chunks)} calls",
            character,
            level="warning" if preview.warnings else "info",
        )
        return preview

    def get_preview(self, preview_id: int) -> ConsolidationPreview:
        return self._previews.get(preview_id)

    async def apply(self, preview_id: int, *, character_name: str | None = None) -> Applied:
        """Write a preview, unless the file changed since it was made."""
        preview = self._previews.get(preview_id)
        if character_name is not None:
            named = self._access.library.character(character_name)
            if named.name != preview.character:
                raise NotFoundError(
                    f"preview {preview_id} is for {preview.character}, not {named.name}"
                )
        if preview.applied_at is not None:
            raise ConflictError(f"preview {preview_id} was already applied ({preview.applied_at})")
        character = self._access.library.character(preview.character)
        files = self._access.files
        loaded = files.load(preview.file)
        if loaded.version.digest != preview.digest:
            raise ConflictError(
                f"{preview.file} changed since preview {preview_id} was made; nothing was "
                "written (make a new preview)"
            )
        new = parse_memory_file(preview.result)
        files.save(loaded, new, cause=CONSOLIDATION, detail=f"preview {preview_id}")
        self._previews.mark_applied(preview_id)
        self._record("consolidate.apply", f"preview {preview_id} applied", character)
        location = next(
            (
                place
                for place in self._access.locator.every_file(character)
                if place.file == loaded.file
            ),
            None,
        )
        warnings = await self._access.announce(location, new) if location is not None else []
        latest = files.latest_version(loaded.file)
        version = latest.number if latest else None
        return Applied(self._previews.get(preview_id), version, tuple(warnings))

    # -- one call ------------------------------------------------------------------------

    async def _consolidate(
        self, character: Character, instructions: str, chunk: Sequence[SourceBlock], where: str
    ) -> list[ProposedBlock]:
        messages = [
            ChatMessage(role, content)  # type: ignore[arg-type]
            for role, content in consolidation_messages(instructions, character.name, chunk)
        ]
        model = self._chat_model()
        self._record(
            "consolidate.call",
            f"{where}: {sum(len(b.bullets) for b in chunk)} memories sent to "
            f"{model.provider}/{model.model}",
            character,
        )
        completion = await model.complete(
            messages,
            max_tokens=answer_allowance(chunk),
            temperature=TEMPERATURE,
            answer_format=ConsolidatedMemories(blocks_sent=len(chunk)),
        )
        try:
            return read_consolidation(
                completion.text,
                chunk,
                finish_reason=completion.finish_reason,
                max_bullet_chars=self._settings.extraction(character.name).max_bullet_chars,
            )
        except UnusableConsolidationError as error:
            reason = self._redact(f"{where}: {error}")  # it may quote the answer
            self._record("consolidate.rejected", reason, character, level="warning")
            raise UnusableConsolidationError(reason) from None

    def _without_secrets(
        self, proposed: list[ProposedBlock]
    ) -> tuple[list[ProposedBlock], list[str]]:
        """The proposal less any memory that repeats a key (a block left empty goes)."""
        kept_blocks, dropped = [], []
        for block in proposed:
            kept, warnings = without_secrets(block.bullets, self._redact)
            dropped += warnings
            if kept:
                kept_blocks.append(replace(block, bullets=tuple(kept)))
        if not kept_blocks:
            raise UnusableConsolidationError(
                "every memory the model proposed held an API key or token; nothing was changed"
            )
        return kept_blocks, dropped

    def _chat_model(self) -> ChatModel:
        if self._model is None:
            self._model = self._model_factory()
        return self._model

    def _record(
        self, kind: str, message: str, character: Character, *, level: Level = "info"
    ) -> None:
        if self._log is not None:
            self._log.record(kind, message, level=level, character=character.name)
