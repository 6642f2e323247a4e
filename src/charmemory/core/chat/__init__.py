"""A chat as the chat engine changes it: new messages, swipes, edits, branches, commands."""
