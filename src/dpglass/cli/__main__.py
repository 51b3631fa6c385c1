"""``python -m dpglass.cli``: the ``dpglass`` command."""

import sys

from dpglass.cli.app import main

if __name__ == "__main__":
    sys.exit(main())
