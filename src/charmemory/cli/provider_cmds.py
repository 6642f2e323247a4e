"""Commands for LLM providers: presets, model listing, a test request."""
