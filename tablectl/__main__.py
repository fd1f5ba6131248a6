"""``python -m tablectl``: the same as the ``tablectl`` command."""

import sys

from tablectl import console_main

sys.exit(console_main())
