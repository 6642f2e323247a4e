"""Memory books: scene memories kept as World Info entries, in the shapes STMB writes.

A memory book is an ordinary lorebook. A scene (an inclusive range of a chat's
messages) is summarised by the model into one entry (`entry.py`) whose title
follows a numbered format (`titles.py`); the model is asked with one of our
presets (`presets.py`) and its JSON answer is read strictly (`answer.py`). In a
multi-book layout one canonical entry goes to a shared book and linked copies
to the books of the scene's participants (`layout.py`). Branches copy books
(`branching.py`), consolidation folds entries into higher tiers (`tiers.py`),
and the chat's own state lives in `chat_metadata.STMemoryBooks` (`chat_state.py`).
Everything here is pure: the services read and write through ports.
"""
