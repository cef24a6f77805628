"""``python -m harness.cli``: the toolproof command line."""

import sys

from harness.cli import main

sys.exit(main())
