"""The ``grep`` and ``glob`` tools, the ripgrep runner they share, the scan policy and the minimatch port."""
