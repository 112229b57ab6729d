"""`python -m optreg` is the `optreg` command."""

import sys

from optreg.cli import main

sys.exit(main())
