"""The OpenAI-compatible memory endpoint's rules, as pure functions.

A frontend sends the whole conversation with every request. These modules read
it (`request`), tell whose conversation it is (`recognition`), follow it into a
recorded chat (`recording`) and put the character's memories into it
(`injection`); the service in `services/memory_endpoint.py` runs them.
"""
