"""Group chats from the command line: `charmemory group create|list|show|add|remove|mute|
unmute|order|new-chat|say|trigger|swipe|continue`."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from charmemory.cli.application import app, state
from charmemory.cli.chat_cmds import JsonFlag, NewOption, streamed, turn_json, with_stop
from charmemory.core.chat.group_order import STRATEGIES

if TYPE_CHECKING:
    from charmemory.core.chat.group_order import Strategy
    from charmemory.services.group_chat import GroupReply, GroupRound, GroupView


group_app = typer.Typer(
    help="Group chats: several characters, one chat, each remembering for itself.",
    no_args_is_help=True,
)
app.add_typer(group_app, name="group")

GroupArg = Annotated[str, typer.Argument(help="Group name or id.")]
MembersArg = Annotated[list[str], typer.Argument(help="Character names or card file names.")]
ChatOption = Annotated[
    str | None, typer.Option("--chat", help="Group chat id; default: the group's current chat.")
]
OrderOption = Annotated[
    str,
    typer.Option(
        "--order", help=f"Reply order: {', '.join(STRATEGIES)} (as SillyTavern's strategies)."
    ),
]


def _strategy(value: str) -> Strategy:
    for strategy in STRATEGIES:
        if value.strip().lower() == strategy:
            return strategy
    raise typer.BadParameter(f"{value!r}; choose one of {', '.join(STRATEGIES)}")


def _show(view: GroupView) -> None:
    typer.echo(f"{view.name} (id {view.id}) · reply order: {view.strategy}")
    if view.allow_self_responses:
        typer.echo("  self responses allowed")
    for member in view.members:
        marks = [
            "muted" if member.muted else "",
            "no card here" if not member.present else "",
            f"joined at message {member.joined_at}" if member.joined_at is not None else "",
        ]
        shown = ", ".join(mark for mark in marks if mark)
        typer.echo(f"  {member.name}" + (f" ({shown})" if shown else ""))
    typer.echo(f"  chat: {view.chat or 'none yet'} ({len(view.chats)} in all)")


def _view_json(view: GroupView) -> dict[str, Any]:
    return {
        "id": view.id,
        "name": view.name,
        "order": view.strategy,
        "allow_self_responses": view.allow_self_responses,
        "members": [
            {
                "name": m.name,
                "card": m.id,
                "muted": m.muted,
                "present": m.present,
                "joined_at": m.joined_at,
            }
            for m in view.members
        ],
        "chat": view.chat,
        "chats": view.chats,
    }


@group_app.command("create")
def create(
    name: Annotated[str, typer.Argument(help="The group's name.")],
    members: MembersArg,
    order: OrderOption = "natural",
    self_responses: Annotated[
        bool, typer.Option("--self-responses", help="Let a member answer its own mention.")
    ] = False,
) -> None:
    """A new group with a first chat opening with each member's greeting."""
    view = state.app().group_chat.create(
        name, members, strategy=_strategy(order), allow_self_responses=self_responses
    )
    _show(view)


@group_app.command("list")
def list_groups() -> None:
    """The workspace's groups."""
    views = state.app().group_chat.groups()
    if not views:
        typer.echo("no groups yet (charmemory group create NAME MEMBER...)")
    for view in views:
        members = ", ".join(m.name + (" (muted)" if m.muted else "") for m in view.members)
        typer.echo(f"{view.name}: {members} · {view.strategy}")


@group_app.command("show")
def show(group: GroupArg, as_json: JsonFlag = False) -> None:
    """A group's members (muted, joined late), reply order and chats."""
    view = state.app().group_chat.view(group)
    if as_json:
        typer.echo(json.dumps(_view_json(view), ensure_ascii=False, indent=2))
    else:
        _show(view)


@group_app.command("add")
def add(group: GroupArg, members: MembersArg) -> None:
    """Add members; in chats under way they remember only what comes after."""
    _show(state.app().group_chat.add(group, members))


@group_app.command("remove")
def remove(group: GroupArg, members: MembersArg) -> None:
    """Take members out of the group (their memories stay)."""
    _show(state.app().group_chat.remove(group, members))


@group_app.command("mute")
def mute(group: GroupArg, members: MembersArg) -> None:
    """Muted members never speak unless told to, but still hear and remember."""
    _show(state.app().group_chat.mute(group, members))


@group_app.command("unmute")
def unmute(group: GroupArg, members: MembersArg) -> None:
    """Let muted members speak again."""
    _show(state.app().group_chat.mute(group, members, muted=False))


@group_app.command("order")
def order(
    group: GroupArg,
    strategy: Annotated[str, typer.Argument(help=f"One of {', '.join(STRATEGIES)}.")],
    self_responses: Annotated[
        bool | None,
        typer.Option(
            "--self-responses/--no-self-responses",
            help="Whether a member may answer its own mention (natural order).",
        ),
    ] = None,
) -> None:
    """Set who replies and in what order."""
    _show(
        state.app().group_chat.set_strategy(
            group, _strategy(strategy), allow_self_responses=self_responses
        )
    )


@group_app.command("new-chat")
def new_chat(group: GroupArg) -> None:
    """Start a new chat for the group (each member's greeting first); it becomes current."""
    typer.echo(f"chat: {state.app().group_chat.new_chat(group)}")


@group_app.command("say")
def say(
    group: GroupArg,
    text: Annotated[str, typer.Argument(help="What you say (- reads standard input).")],
    chat: ChatOption = None,
    new: NewOption = False,
    as_json: JsonFlag = False,
) -> None:
    """Send a message; the members the reply order drafts answer, one after the other."""
    said = sys.stdin.read() if text == "-" else text
    groups = state.app().group_chat
    _round(
        lambda on_delta, on_speaker, stop: groups.send(
            group, said, chat, new=new, on_delta=on_delta, on_speaker=on_speaker, stop=stop
        ),
        as_json,
    )


@group_app.command("trigger")
def trigger(
    group: GroupArg,
    member: Annotated[
        str | None, typer.Argument(help="Who speaks (muted or not); default: the reply order.")
    ] = None,
    chat: ChatOption = None,
    as_json: JsonFlag = False,
) -> None:
    """Replies without a message of yours: the member named, else as the reply order drafts."""
    groups = state.app().group_chat
    _round(
        lambda on_delta, on_speaker, stop: groups.trigger(
            group, chat, member=member, on_delta=on_delta, on_speaker=on_speaker, stop=stop
        ),
        as_json,
    )


@group_app.command("swipe")
def swipe(group: GroupArg, chat: ChatOption = None, as_json: JsonFlag = False) -> None:
    """A new alternative of the last reply, by the member who wrote it."""
    _redo(group, chat, "swipe", as_json)


@group_app.command("continue")
def continue_(group: GroupArg, chat: ChatOption = None, as_json: JsonFlag = False) -> None:
    """Continue the last reply, as the member who wrote it."""
    _redo(group, chat, "continue", as_json)


def _reply_json(reply: GroupReply) -> dict[str, Any]:
    return {"speaker": reply.speaker, **turn_json(reply.turn)}


def _round(run: Callable[..., Any], as_json: bool) -> None:
    """Run a round, each reply streamed after its speaker's name (or all of it as JSON)."""
    console = Console()
    spoken: list[str] = []

    def announce(name: str) -> None:
        if spoken:
            console.print()
        spoken.append(name)
        console.print(f"[bold]{name}[/bold]: ", end="", highlight=False)

    async def go() -> tuple[GroupRound, list[str]]:
        quiet = as_json
        done: GroupRound = await with_stop(
            lambda stop: run(
                None if quiet else streamed(console), None if quiet else announce, stop
            )
        )
        return done, await state.app().chat.extractions_finished()

    done, failures = asyncio.run(go())
    if as_json:
        payload = {
            "group": done.group,
            "chat": done.chat,
            "replies": [_reply_json(r) for r in done.replies],
        }
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
    elif done.replies:
        typer.echo("")
    else:
        typer.echo("(no one was drafted to reply: charmemory group trigger GROUP [MEMBER])")
    _warn(failures)


def _redo(group: str, chat: str | None, kind: Any, as_json: bool) -> None:
    console = Console()
    groups = state.app().group_chat

    async def go() -> tuple[GroupReply, list[str]]:
        reply = await with_stop(
            lambda stop: groups.redo(
                group, kind, chat, on_delta=None if as_json else streamed(console), stop=stop
            )
        )
        return reply, await state.app().chat.extractions_finished()

    reply, failures = asyncio.run(go())
    if as_json:
        typer.echo(json.dumps(_reply_json(reply), ensure_ascii=False, indent=2))
    else:
        typer.echo("")
    _warn(failures)


def _warn(failures: list[str]) -> None:
    for failure in failures:
        typer.secho(f"warning: {failure}", fg=typer.colors.YELLOW, err=True)
