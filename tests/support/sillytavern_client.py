"""A client that talks to an OpenAI-compatible endpoint exactly as SillyTavern's server does.

It writes its requests with `http.client`, which, like node-fetch, sends
`Authorization: Bearer ` with its trailing space (httpx refuses to).

Its "Custom (OpenAI-compatible)" source joins the URL by concatenation (a trailing
slash gives `/v1//chat/completions`), sends `Bearer ` with an empty key, its own
headers, the body keys in its own order, and resends the whole conversation
every time: the system prompt pieces, the card's greeting, then the turns.
"""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from tests.support.api_server import MAIN_PROMPT


@dataclass
class Shown:
    is_user: bool
    swipes: list[str]
    swipe_id: int = 0

    @property
    def text(self) -> str:
        return self.swipes[self.swipe_id]


@dataclass
class SillyTavern:
    base_url: str  # as typed in the connection panel, e.g. with a trailing slash
    character: str
    description: str
    greeting: str
    key: str = ""
    stream: bool = True
    messages: list[Shown] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.messages.append(Shown(False, [self.greeting]))

    # -- what a user does -------------------------------------------------------------

    def send(self, text: str) -> str:
        self.messages.append(Shown(True, [text]))
        reply = self.generate()
        self.messages.append(Shown(False, [reply]))
        return reply

    def regenerate(self) -> str:
        """A swipe: the same history without the last reply, the answer as its new swipe."""
        last = self.messages[-1]
        shown = self.messages[:-1]
        reply = self.generate(shown)
        last.swipes.append(reply)
        last.swipe_id = len(last.swipes) - 1
        return reply

    def edit(self, index: int, text: str) -> None:
        self.messages[index].swipes[self.messages[index].swipe_id] = text

    def delete_last(self, count: int) -> None:
        del self.messages[-count:]

    # -- the wire -----------------------------------------------------------------------

    def body(self, shown: list[Shown] | None = None) -> dict[str, Any]:
        history = [
            {"role": "user" if m.is_user else "assistant", "content": m.text}
            for m in (self.messages if shown is None else shown)
        ]
        description = self.description.replace("{{char}}", self.character).replace(
            "{{user}}", "Alex"
        )
        return {
            "messages": [
                {"role": "system", "content": MAIN_PROMPT.format(name=self.character)},
                {"role": "system", "content": description},
                {"role": "system", "content": "[Start a new Chat]"},
                *history,
            ],
            "model": "scripted-model",
            "temperature": 1,
            "max_tokens": 300,
            "stream": self.stream,
            "presence_penalty": 0,
            "frequency_penalty": 0,
            "top_p": 1,
        }

    def headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self.key}",
            "Content-Type": "application/json",
            "Accept": "*/*",
            "Accept-Encoding": "gzip, deflate, br",
            "User-Agent": "node-fetch",
            "Connection": "close",
        }

    def request(self, method: str, path: str, body: bytes | None = None) -> Answer:
        url = urlsplit(self.base_url + path)
        connection = http.client.HTTPConnection(url.hostname or "", url.port, timeout=30)
        try:
            connection.request(method, url.path, body=body, headers=self.headers())
            response = connection.getresponse()
            return Answer(response.status, dict(response.getheaders()), response.read().decode())
        finally:
            connection.close()

    def generate(self, shown: list[Shown] | None = None) -> str:
        answer = self.request("POST", "/chat/completions", json.dumps(self.body(shown)).encode())
        if answer.status != 200:
            raise AssertionError(f"HTTP {answer.status}: {answer.text}")
        if not self.stream:
            return json.loads(answer.text)["choices"][0]["message"]["content"]
        text = []
        for line in answer.text.splitlines():
            if line.startswith("data: ") and line != "data: [DONE]":
                chunk = json.loads(line.removeprefix("data: "))
                for choice in chunk.get("choices") or []:
                    text.append(choice.get("delta", {}).get("content") or "")
        return "".join(text)

    def models(self) -> Answer:
        return self.request("GET", "/models")


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    text: str
