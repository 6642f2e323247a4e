"""Chat models over the providers' HTTP APIs (OpenAI-compatible and Anthropic)."""
