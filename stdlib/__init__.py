"""Package data: the Jostle standard library, modules written in Jostle (*.jst)."""
