"""The tool protocol: its JSON Schema and the typed message dataclasses shared by server and clients."""
