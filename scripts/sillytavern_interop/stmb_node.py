"""STMB's own narratorMode.js, run under node on the chat and books charmemory wrote.

narratorMode.js is a plain ES module (no SillyTavern imports), so its normaliser
and readers run as they run inside SillyTavern. A small module written next to
the evidence imports it, reads the chat and the books, and prints what STMB's
functions make of them as JSON; the checks compare that with what charmemory
wrote.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from scripts.sillytavern_interop.checks import Checks
from scripts.sillytavern_interop.scenario import Written

READER = """
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
const [moduleFile, chatFile, worldsDir] = process.argv.slice(2);
const stmb = await import(pathToFileURL(moduleFile).href);
const [header, ...messages] = readFileSync(chatFile, 'utf8').trim().split('\\n').map(JSON.parse);
const state = header.chat_metadata.STMemoryBooks;
const { config, changed } = stmb.normalizeNarratorConfig(structuredClone(state.narratorMode));
const book = name => JSON.parse(readFileSync(`${worldsDir}/${name}.json`, 'utf8'));
const books = [state.manualLorebook, ...config.members.map(member => member.lorebookName)];
const memories = name => Object.values(book(name).entries).filter(entry => entry.stmemorybooks);
const scene = stmb.getNarratorSceneParticipants(messages.slice(1, 5));
const sourceIds = name => memories(name).map(entry => String(entry.uid));
const snapshotBooks = stmb.getNarratorActiveMembers(config).map(member => member.lorebookName);
const candidates = [];
for (const name of snapshotBooks) stmb.mergeNarratorLorebookEntries(candidates, book(name), name);
console.log(JSON.stringify({
  normalised: config,
  changed,
  active_members: stmb.getNarratorActiveMembers(config).map(member => member.name),
  bindings: stmb.validateNarratorBindings(config, state.manualLorebook, books),
  message_casts: messages.map(message => stmb.getNarratorCastFromMessage(message)),
  swipe_casts: messages.map(message => (message.swipe_info || []).map(
    info => stmb.getNarratorCastFromMessage({ extra: info.extra }))),
  stamped_scene: scene,
  legacy_scene: stmb.getNarratorSceneParticipants(messages.slice(0, 5)),
  copy_books: stmb.buildNarratorCopyTargets(config, scene.memberIds).map(t => t.lorebookName),
  source_metadata: Object.fromEntries(books.map(
    name => [name, stmb.collectNarratorSourceMetadata(memories(name), sourceIds(name))])),
  snapshot_candidates: candidates.map(entry => `${entry.world}#${entry.uid}`),
}));
"""


def check_with_stmb_functions(
    stmb: Path, user: Path, written: Written, evidence: Path, checks: Checks
) -> None:
    reader = evidence / "stmb-read-narrator-chat.mjs"
    reader.write_text(READER, encoding="utf-8")
    command = ["node", str(reader), str(stmb / "narratorMode.js"), str(written.chat_path)]
    ran = subprocess.run([*command, str(user / "worlds")], capture_output=True, text=True)
    if ran.returncode != 0:
        checks.record("STMB's narratorMode.js runs on the chat", False, ran.stderr.strip())
        return
    found = json.loads(ran.stdout)
    (evidence / "stmb-narrator-functions.json").write_text(
        json.dumps(found, indent=2, ensure_ascii=False), encoding="utf-8"
    )
    _compare(found, written, checks)


def _compare(found: dict, written: Written, checks: Checks) -> None:
    lines = written.chat_lines()
    state = lines[0]["chat_metadata"]["STMemoryBooks"]
    ids, omniscient = written.ids, written.books[0]
    kestrel, vell, dorran = written.stamp("Kestrel"), written.stamp("Vell"), written.stamp("Dorran")
    everyone = written.stamp("Kestrel", "Vell", "Dorran")
    checks.equal(
        "STMB's normaliser keeps the cast as written", found["normalised"], state["narratorMode"]
    )
    checks.equal("STMB's normaliser finds nothing to change or drop", found["changed"], False)
    checks.equal("STMB's active members", found["active_members"], ["Dorran"])
    checks.equal("STMB validates the members' books", found["bindings"]["issues"], [])
    checks.equal(
        "STMB reads each message's stamp",
        found["message_casts"],
        [[], kestrel + vell, everyone, kestrel, dorran],
    )
    checks.equal(
        "STMB reads each swipe's stamp",
        found["swipe_casts"],
        [[], [], [everyone], [], [kestrel, dorran]],
    )
    checks.equal(
        "STMB's participants of the stamped scene 1-4",
        found["stamped_scene"],
        {"memberIds": everyone, "hasUntaggedMessages": False},
    )
    checks.equal(
        "STMB sees the greeting's range 0-4 as legacy",
        found["legacy_scene"]["hasUntaggedMessages"],
        True,
    )
    checks.equal(
        "STMB would copy the scene to the books charmemory copied it to",
        found["copy_books"],
        list(written.books[1:]),
    )
    expected_metadata = {omniscient: {"STMB_narratorParticipantIds": everyone}}
    for name, member_id in zip(written.books[1:], ids.values(), strict=True):
        expected_metadata[name] = {"STMB_narratorOwnerIds": [member_id]}
    checks.equal(
        "STMB collects the entries' owner and participant ids",
        found["source_metadata"],
        expected_metadata,
    )
    checks.equal(
        "STMB's candidates for the active cast come from Dorran's book alone",
        sorted({name.split("#")[0] for name in found["snapshot_candidates"]}),
        [written.books[3]],
    )
