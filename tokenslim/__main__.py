"""``python -m tokenslim``: the same command line as the ``tokenslim`` script."""

from tokenslim.cli import main

raise SystemExit(main())
