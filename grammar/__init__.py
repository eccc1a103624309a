"""Package data: the Jostle grammar (jostle.lark), shipped inside the jostle package."""
