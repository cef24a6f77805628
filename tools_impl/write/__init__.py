"""The ``write`` tool."""
