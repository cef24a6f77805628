"""The ``edit`` tool: the wrapper, the pi edit engine with MiniMax's patches, fuzzy normalisation."""
