"""``python -m tools_impl.server [--upstream]``: the reference tool server on stdin/stdout."""

import sys

from tools_impl.server.dispatch import main

sys.exit(main())
