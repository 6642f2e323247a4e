"""Every setting, declared once as data: its name, kind, range or choices, default and scopes."""
