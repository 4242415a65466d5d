"""python -m eukhe: the same as the `eukhe` command."""

from eukhe.cli import main

raise SystemExit(main())
