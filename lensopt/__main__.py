import sys

from lensopt.cli import main

sys.exit(main())
