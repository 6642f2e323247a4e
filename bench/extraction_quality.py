"""Extraction quality of the embedded local model on hand-labelled chat excerpts.

Each candidate (a local model and a way of prompting it) extracts memories from the
excerpts of bench/data/extraction_quality.json exactly as an extraction call would:
the default prompt rendered by the real renderer (then, for the compact candidates,
rewritten as the embedded model rewrites it, in the candidate's style), the service's
temperature and token budget, the answer held by the real grammar and read by the real
parser. bench/extraction_scoring.py scores each answer:

- recalled: the labelled facts found, a fact counting when one bullet holds all of its
  keywords (one phrasing of each) and none of its inverted readings; with its 95 %
  Wilson interval, so a change of one or two facts is not read as progress;
- inverted: bullets holding an inverted reading of a labelled fact (who did what to
  whom reversed, "found" for "lost", the user's sister's bakery become the user's);
- trivia: bullets holding the keywords of a labelled piece of trivia (weather,
  humming, small talk);
- invented: bullets that name a person, place or number absent from the excerpt and
  its card, or that use a word of a prompt's worked example (a leak);
- verbatim: bullets that copy a chat line (8 or more words in a row from one message,
  or 80% of the bullet's words in order);
- quiet: excerpts with nothing worth keeping that got no bullet;
- copied: for the candidates given saved memories, bullets that restate one of them.

A run interleaves its candidates excerpt by excerpt, so a machine that gets busier
midway slows them alike. Answers are kept (bench/extraction_quality_runs.json) and
scored when the report is written, so better labels rescore every run without the
model; `--resume` finishes a run that was stopped.

A run goes through its excerpts in the order it lists them: `--excerpts shuffled` lists
all of them in one fixed random order (the same every time), so a run stopped when its
time is up is a random sample of the set, not its first kind of excerpt. Only the
excerpts that every candidate of a run answered are scored, so a stopped run still
compares the candidates on the same excerpts.

Run: `PYTHONPATH=src .venv/bin/python bench/extraction_quality.py --run NAME
[--candidates TEXT ...] [--excerpts subset|all|shuffled|ID ...] [--resume] [--threads N]
[--answer TEXT ...]`;
`--report` only rewrites the `## Local model quality` section of bench/RESULTS.md.
Installs the candidate models when missing (1.1 GB for the default).
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.extraction_json import EXAMPLE_JSON, SYSTEM_JSON, facts_as_bullets, facts_format
from bench.extraction_scoring import (
    Excerpt,
    Score,
    excerpt_from_labels,
    score_answer,
    wilson,
)
from bench.extraction_second_look import second_look
from bench.results import write_section
from charmemory.adapters.llm.embedded import (
    EmbeddedModel,
    EmbeddedOptions,
    usable_cpus,
)
from charmemory.adapters.llm.embedded_prompt import (
    SYSTEM,
    CompactStyle,
    compact_prompt,
    extraction_request,
    without_example_copies,
)
from charmemory.adapters.model_install import LOCAL_LLMS, ModelInstaller
from charmemory.core.extraction_answer import SENTINEL, parse_answer
from charmemory.core.extraction_prompt import (
    DEFAULT_EXTRACTION_PROMPT,
    PromptValues,
    render_prompt,
)
from charmemory.core.extraction_settings import ExtractionSettings
from charmemory.core.message_cleaning import render_messages
from charmemory.core.watermark import SourceMessage
from charmemory.ports import ChatMessage, NewMemories
from charmemory.services.extraction import TEMPERATURE

# The same rules with the facts' owners and specifics asked for ("rules v2"):
# a candidate measured against the default.
SYSTEM_V2 = f"""\
You write the long-term memory of a role-play character. You read a chat and note \
the few facts the character must still remember months later.
Keep: secrets revealed, names, family, origins, relationships, promises, debts, \
plans, injuries, gifts, decisions.
Skip: greetings, small talk, jokes, food, weather, clothes, step-by-step actions, \
and anything the character card or the saved memories already say.
Write each memory as one short sentence in your own words, in the past tense. Start \
it with the name of the person it is about, and keep the names, places, numbers and \
dates the chat gives. Never copy a chat line. Never quote.
Keep straight whose fact it is: what a person says about their own family, past or \
belongings is about them, never about the one they tell it to.
Answer with one <memory> block of "- " bullets. If the chat holds nothing worth \
remembering, answer {SENTINEL}."""


BENCH = Path(__file__).resolve().parent
DATA = BENCH / "data" / "extraction_quality.json"
RUNS = BENCH / "extraction_quality_runs.json"
LOCK = Path(tempfile.gettempdir()) / "charmemory-extraction-quality-runs.lock"
# Scores of the first 14 excerpts, kept from before answers were kept.
EARLIER = BENCH / "extraction_quality_scores.json"
SETTINGS = ExtractionSettings()
# Excerpts to try ideas on before a whole run: two of the first set, two where the
# character and the user are easily confused, one long stretch of small talk, one long
# scene with seven facts.
SUBSET = (
    "fantasy-silverleaf-archivist",
    "sci-fi-neon-fixer",
    "modern-flatmates-spare-key",
    "mystery-village-fete-marrow",
    "slice-of-life-bus-stop-chatter",
    "horror-skerrow-lighthouse",
)
QWEN_0_5B, QWEN_1_5B = "qwen2.5-coder-0.5b-instruct-q4", "qwen2.5-coder-1.5b-instruct-q4"
TODAY = "1.5B, compact prompt, repeat penalty 1.1"
# The compact prompt as it was when TODAY was the default.
TODAYS_STYLE = CompactStyle(name_pronouns=False, rules=SYSTEM)


@dataclass(frozen=True)
class Candidate:
    label: str
    model: str
    style: CompactStyle | None  # None: the default prompt as sent
    repeat_penalty: float = 1.0
    saved: int = 0  # memories shown as already saved (from bench/data/memories)
    json_facts: bool = False  # one JSON object per fact (bench/extraction_json.py)
    second_look: bool = False  # a second pass (bench/extraction_second_look.py)
    temperature: float = TEMPERATURE  # the service's unless said


CANDIDATES = [
    Candidate("0.5B, default prompt", QWEN_0_5B, None),
    Candidate("0.5B, compact prompt", QWEN_0_5B, TODAYS_STYLE),
    Candidate("1.5B, default prompt", QWEN_1_5B, None),
    Candidate("1.5B, compact prompt", QWEN_1_5B, TODAYS_STYLE),
    Candidate(
        "1.5B, compact prompt, no example",
        QWEN_1_5B,
        CompactStyle(worked_example=False, name_pronouns=False, rules=SYSTEM),
    ),
    Candidate(TODAY, QWEN_1_5B, TODAYS_STYLE, 1.1),
    Candidate(
        "1.5B, compact prompt, repeat penalty 1.1, 5 saved memories",
        QWEN_1_5B,
        TODAYS_STYLE,
        1.1,
        5,
    ),
    Candidate(
        "1.5B, names for I and you, repeat penalty 1.1",
        QWEN_1_5B,
        CompactStyle(name_pronouns=True, rules=SYSTEM),
        1.1,
    ),
    Candidate(
        "1.5B, names for I and you, rules v2, repeat penalty 1.1",
        QWEN_1_5B,
        CompactStyle(name_pronouns=True, rules=SYSTEM_V2),
        1.1,
    ),
    *(
        Candidate(
            f"1.5B, {chat}one JSON object per fact, repeat penalty 1.1",
            QWEN_1_5B,
            CompactStyle(name_pronouns=names, rules=SYSTEM_JSON, example_answer=EXAMPLE_JSON),
            1.1,
            json_facts=True,
        )
        for chat, names in (("", False), ("names for I and you, ", True))
    ),
    Candidate(
        "1.5B, compact prompt, a second look, repeat penalty 1.1",
        QWEN_1_5B,
        TODAYS_STYLE,
        1.1,
        second_look=True,
    ),
    # Greedy: the likeliest token each time, instead of a sample at the service's 0.3.
    Candidate(
        "1.5B, compact prompt, greedy, repeat penalty 1.1",
        QWEN_1_5B,
        TODAYS_STYLE,
        1.1,
        temperature=0.0,
    ),
    Candidate(
        "1.5B, names for I and you, rules v2, greedy, repeat penalty 1.1",
        QWEN_1_5B,
        CompactStyle(name_pronouns=True, rules=SYSTEM_V2),
        1.1,
        temperature=0.0,
    ),
]


def load_excerpts() -> list[Excerpt]:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    return [excerpt_from_labels(raw) for raw in data["excerpts"]]


def wanted(excerpt: Excerpt) -> NewMemories:
    """The answer format an extraction call asks for."""
    return NewMemories(SETTINGS.max_bullets, excerpt.character, excerpt.user)


def default_prompt(excerpt: Excerpt, saved: Sequence[str] = ()) -> list[ChatMessage]:
    """The extraction prompt as the service renders it for this excerpt."""
    sources = [
        SourceMessage(
            index=i,
            is_user=bool(m["is_user"]),
            text=str(m["text"]),
            fingerprint=str(i),
            is_hidden=False,
            name=str(m["name"]),
        )
        for i, m in enumerate(excerpt.messages)
    ]
    values = PromptValues(
        char=excerpt.character,
        user=excerpt.user,
        char_card=excerpt.card,
        existing_memories="\n".join(f"- {memory}" for memory in saved),
        recent_messages=render_messages(
            sources, user_name=excerpt.user, char_name=excerpt.character
        ),
        max_bullets=SETTINGS.max_bullets,
    )
    return [
        ChatMessage(role, content)  # type: ignore[arg-type]
        for role, content in render_prompt(DEFAULT_EXTRACTION_PROMPT, values)
    ]


def prompt_for(
    candidate: Candidate, excerpt: Excerpt, saved: Sequence[str] = ()
) -> list[ChatMessage]:
    """What the candidate sends: the default prompt, or its compact rewrite."""
    messages = default_prompt(excerpt, saved)
    if candidate.style is None:
        return messages
    request = extraction_request(messages, wanted(excerpt))
    assert request is not None
    return compact_prompt(request, candidate.style)


def saved_memories(candidate: Candidate, position: int, excerpt: Excerpt) -> list[str]:
    """Memories from the retrieval set, given to the excerpt's character: a small model
    tempted to copy a saved list back shows it here."""
    if not candidate.saved:
        return []
    files = sorted((DATA.parent / "memories").glob("*.md"))
    source = files[position % len(files)]
    bullets = [
        line[2:].strip()
        for line in source.read_text(encoding="utf-8").splitlines()
        if line.startswith("- ") and not line.startswith("- [")  # not the topic tags
    ]
    return [
        b.replace(source.stem, excerpt.character).replace("{{user}}", excerpt.user)
        for b in bullets[: candidate.saved]
    ]


@dataclass
class Run:
    """One run's answers: by candidate label, by excerpt id."""

    started: str
    threads: int
    excerpts: list[str]
    candidates: list[str]
    load: list[float] = field(default_factory=list)  # 1-minute load average per answer
    answers: dict[str, dict[str, dict]] = field(default_factory=dict)


def load_runs() -> dict[str, Run]:
    if not RUNS.exists():
        return {}
    return {name: Run(**raw) for name, raw in json.loads(RUNS.read_text("utf-8")).items()}


def save_runs(runs: dict[str, Run]) -> None:
    raw = {name: run.__dict__ for name, run in runs.items()}
    RUNS.write_text(json.dumps(raw, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


@contextmanager
def runs_locked() -> Iterator[dict[str, Run]]:
    """The kept runs, saved again on leaving; one process at a time reads and writes them,
    so several processes can answer one run."""
    with LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        runs = load_runs()
        yield runs
        save_runs(runs)


async def execute(args: argparse.Namespace) -> None:
    """Answer every (excerpt, candidate) pair of the run not answered yet, saving as it goes.

    `--answer` names the run's candidates this process answers (all by default): several
    processes can answer one run, each for some of its candidates (one per core with
    `--threads 1`; on a busy machine, two threads of one model spend much of their time
    waiting for each other)."""
    with runs_locked() as runs:
        run = runs.get(args.run) if args.resume else None
        if run is None:
            run = Run(
                started=datetime.now(UTC).isoformat(timespec="minutes"),
                threads=args.threads,
                excerpts=[e.id for e in chosen_excerpts(args.excerpts)],
                candidates=[c.label for c in CANDIDATES if chosen(c.label, args.candidates)],
            )
            runs[args.run] = run
    mine = [c for c in CANDIDATES if c.label in run.candidates and chosen(c.label, args.answer)]
    models: dict[str, EmbeddedModel] = {}
    by_id = {e.id: e for e in load_excerpts()}
    for position, excerpt in enumerate(by_id[excerpt_id] for excerpt_id in run.excerpts):
        for candidate in mine:
            if excerpt.id in run.answers.get(candidate.label, {}):
                continue
            if candidate.label not in models:
                models[candidate.label] = model_for(candidate, run.threads)
            kept = await answer(models[candidate.label], candidate, position, excerpt)
            with runs_locked() as runs:
                run = runs[args.run]
                run.answers.setdefault(candidate.label, {})[excerpt.id] = kept
                run.load.append(os.getloadavg()[0])
            print(f"{candidate.label} / {excerpt.id}: {kept}", flush=True)


def chosen(label: str, texts: Sequence[str] | None) -> bool:
    """Whether a label is among those asked for: the same label, else one holding the text."""
    if not texts:
        return True
    labels = {c.label for c in CANDIDATES}
    return any(label == t if t in labels else t in label for t in texts)


SHUFFLE_SEED = 21


def chosen_excerpts(choice: Sequence[str]) -> list[Excerpt]:
    excerpts = load_excerpts()
    if list(choice) == ["all"]:
        return excerpts
    if list(choice) == ["shuffled"]:
        random.Random(SHUFFLE_SEED).shuffle(excerpts)
        return excerpts
    wanted_ids = set(SUBSET if list(choice) == ["subset"] else choice)
    unknown = wanted_ids - {e.id for e in excerpts}
    if unknown:
        raise SystemExit(f"no excerpt {sorted(unknown)[0]!r}")
    return [e for e in excerpts if e.id in wanted_ids]


def model_for(candidate: Candidate, threads: int) -> EmbeddedModel:
    installed = ModelInstaller(progress=print).install(LOCAL_LLMS[candidate.model])
    # As sent: a compact candidate's prompt is already rewritten in its own style.
    options = EmbeddedOptions(
        threads=threads, repeat_penalty=candidate.repeat_penalty, extraction_prompt="as-sent"
    )
    return EmbeddedModel(installed, options)


async def answer(
    model: EmbeddedModel, candidate: Candidate, position: int, excerpt: Excerpt
) -> dict:
    saved = saved_memories(candidate, position, excerpt)
    started, cpu = time.perf_counter(), time.process_time()
    prompt = prompt_for(candidate, excerpt, saved)
    completion = await model.complete(
        prompt,
        max_tokens=SETTINGS.max_response_tokens,
        temperature=candidate.temperature,
        answer_format=facts_format(SETTINGS.max_bullets)
        if candidate.json_facts
        else wanted(excerpt),
    )
    text = facts_as_bullets(completion.text) if candidate.json_facts else completion.text
    kept: dict = {"json": completion.text} if candidate.json_facts else {}
    prompt_tokens = completion.usage.prompt_tokens or 0
    completion_tokens = completion.usage.completion_tokens or 0
    if candidate.second_look:
        kept["first"] = text
        text, added, written = await second_look(
            model,
            prompt,
            completion,
            wanted(excerpt),
            max_tokens=SETTINGS.max_response_tokens,
            temperature=candidate.temperature,
        )
        prompt_tokens += added
        completion_tokens += written
    return {
        "text": text,
        **kept,
        "finish_reason": completion.finish_reason,
        "saved": saved,
        "seconds": round(time.perf_counter() - started, 1),
        "cpu_seconds": round(time.process_time() - cpu, 1),
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
    }


def answered_by_all(run: Run) -> list[str]:
    """The run's excerpts that every candidate of it answered, in the run's order."""
    return [
        excerpt_id
        for excerpt_id in run.excerpts
        if all(excerpt_id in run.answers.get(label, {}) for label in run.candidates)
    ]


def score_run(run: Run, label: str) -> Score:
    """The candidate's answers to the excerpts every candidate answered, scored against
    the labels as they are now."""
    by_id = {e.id: e for e in load_excerpts()}
    candidate = next(c for c in CANDIDATES if c.label == label)
    score = Score(saved=candidate.saved)
    for excerpt_id in answered_by_all(run):
        kept = run.answers[label][excerpt_id]
        # As the embedded model hands answers on now (an answer kept before it did so
        # loses its copies of the worked example here).
        text = without_example_copies(
            kept["text"], prompt_for(candidate, by_id[excerpt_id], kept["saved"])
        )
        parsed = parse_answer(
            text, max_bullets=SETTINGS.max_bullets, finish_reason=kept["finish_reason"]
        )
        score_answer(score, by_id[excerpt_id], parsed, kept["saved"])
        score.seconds += kept["seconds"]
        score.cpu_seconds += kept["cpu_seconds"]
        score.prompt_tokens += kept["prompt_tokens"]
        score.completion_tokens += kept["completion_tokens"]
    return score


# Tokens per second of the 1.5B model on 2 idle cores (the speed table below): a busy
# machine's seconds say little, so a chunk's time is estimated from its tokens.
PROMPT_RATE, GENERATE_RATE = 46.0, 9.2


def estimated_seconds(kept: dict) -> float:
    return kept["prompt_tokens"] / PROMPT_RATE + kept["completion_tokens"] / GENERATE_RATE


def run_table(run: Run) -> list[str]:
    by_id = {e.id: e for e in load_excerpts()}
    lines = [
        "| candidate | recalled (95 % interval) | inverted | invented | trivia | verbatim "
        "| copied | quiet | bullets | est. s per 20-message chunk | CPU s/excerpt |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label in run.candidates:
        s = score_run(run, label)
        if not s.answers:
            continue
        low, high = wilson(s.recalled, s.facts)
        n = max(1, s.bullets)
        long_chunks = [
            estimated_seconds(run.answers[label][excerpt_id])
            for excerpt_id in answered_by_all(run)
            if len(by_id[excerpt_id].messages) >= 20
        ]
        lines.append(
            f"| {label} | {s.recalled}/{s.facts} ({s.recalled / max(1, s.facts):.0%}, "
            f"{low:.0%}-{high:.0%}) | {share(s.inverted, n)} | {share(s.invented, n)} "
            f"| {share(s.trivia, n)} | {share(s.verbatim, n)} "
            f"| {share(s.copied, n) if s.saved else '-'} | {s.quiet}/{s.empty_excerpts} "
            f"| {s.bullets} | {max(long_chunks) if long_chunks else 0:.0f} "
            f"| {s.cpu_seconds / s.answers:.0f} |"
        )
    return lines


def share(count: int | None, bullets: int) -> str:
    return "-" if count is None else f"{count} ({count / bullets:.0%})"


def earlier_table() -> list[str]:
    """The first 14 excerpts' scores, kept from before answers were kept."""
    kept = json.loads(EARLIER.read_text(encoding="utf-8"))
    lines = [
        "| candidate | recalled | invented | verbatim | copied | quiet | bullets | s/excerpt |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, s in kept["candidates"].items():
        n = max(1, s["bullets"])
        older = s.get("prompt_version", 1) == 1 and "default prompt" not in label
        lines.append(
            f"| {label}{' (earlier prompt)' if older else ''} | {s['recalled']}/{s['facts']} "
            f"({s['recalled'] / s['facts']:.0%}) | {s['invented']} ({s['invented'] / n:.0%}) "
            f"| {s['verbatim']} ({s['verbatim'] / n:.0%}) "
            f"| {share(s.get('copied'), n) if s.get('saved') else '-'} "
            f"| {s['quiet']}/{s['empty_excerpts']} | {s['bullets']} "
            f"| {s['seconds'] / s['answers']:.1f} |"
        )
    lines += [
        "",
        "| model | prompt tokens/s | generated tokens/s | memory after loading |",
        "|---|---|---|---|",
        *(
            f"| {name} | {p:.0f} | {g:.1f} | {mb:.0f} MB |"
            for name, (p, g, mb) in sorted(kept["speed"].items())
        ),
    ]
    return lines


def run_heading(name: str, run: Run) -> str:
    scored = set(answered_by_all(run))
    facts = sum(len(e.facts) for e in load_excerpts() if e.id in scored)
    load = f"{min(run.load):.1f}-{max(run.load):.1f}" if run.load else "-"
    unfinished = (
        f" Stopped after {len(scored)} of its {len(run.excerpts)} excerpts (answered by"
        f" every candidate, the ones scored); `--run {name!r} --resume` goes on."
        if len(scored) < len(run.excerpts)
        else ""
    )
    return (
        f"**{name}** ({run.started}, {len(scored)} excerpts, {facts} facts, "
        f"{run.threads} threads, load average {load} on 2 cores).{unfinished}"
    )


def section(runs: dict[str, Run], notes: Sequence[str]) -> list[str]:
    lines = [
        f"Labelled excerpts: bench/data/extraction_quality.json "
        f"({len(load_excerpts())} excerpts). Each candidate extracts from each excerpt in "
        "one call as the service makes it; a run interleaves its candidates excerpt by "
        "excerpt. The machine is shared (its load average is given per run): seconds are "
        "estimated from the tokens at the 1.5B model's speed on 2 idle cores (below), CPU "
        "seconds are what the run used. Run `PYTHONPATH=src .venv/bin/python "
        "bench/extraction_quality.py --run NAME --candidates ... --excerpts all`.",
        "",
    ]
    for name, run in runs.items():
        lines += [run_heading(name, run), "", *run_table(run), ""]
    lines += [*notes, "", "### Earlier: the first 14 excerpts (52 facts)", "", *earlier_table()]
    return lines


NOTES_FILE = BENCH / "extraction_quality_notes.md"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--run", help="the run's name (its table's heading)")
    parser.add_argument("--candidates", nargs="*", help="candidates whose label has this text")
    parser.add_argument(
        "--excerpts", nargs="*", default=["subset"], help="subset, all, shuffled or ids"
    )
    parser.add_argument("--resume", action="store_true", help="finish the named run")
    parser.add_argument("--answer", nargs="*", help="answer only these of the run's candidates")
    parser.add_argument("--threads", type=int, default=usable_cpus())
    parser.add_argument("--report", action="store_true", help="only rewrite RESULTS.md")
    args = parser.parse_args()
    if not args.report:
        if not args.run:
            parser.error("--run NAME is needed to run candidates")
        asyncio.run(execute(args))
    notes = NOTES_FILE.read_text(encoding="utf-8").splitlines() if NOTES_FILE.exists() else []
    lines = section(load_runs(), notes)
    print("\n".join(lines))
    write_section("Local model quality", lines)


if __name__ == "__main__":
    main()
