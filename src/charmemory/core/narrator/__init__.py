"""Narrator mode: one narrator card voicing a declared cast, each member with a memory book.

In a one-on-one chat every reply comes from the narrator card, so nothing in the
messages says which of the characters it voices were there. Narrator mode keeps
that as explicit state, in the shapes SillyTavern MemoryBooks (STMB) writes: the
cast and the active cast in `chat_metadata.STMemoryBooks.narratorMode`
(`cast.py`, `mode.py`); a snapshot of the active cast taken when a generation
starts, whose members' books join that generation's World Info and which is
stamped on the reply (`stamps.py`); the participants of a scene read from
those stamps, or confirmed by the user for replies without one, and the books
a scene memory goes to (`scenes.py`); the checks `charmemory doctor` runs
(`doctor.py`); and which member's book holds which scene (`presence.py`).
Everything here is pure.
"""
