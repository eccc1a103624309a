"""`python -m jostle`: the same as the `jostle` command."""

from jostle.cli import main

raise SystemExit(main())
