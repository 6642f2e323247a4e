"""The parts of scripts/check_sillytavern_interop.py: SillyTavern's server, the chat
charmemory writes, STMB's functions under node, and what STMB shows in a browser."""
