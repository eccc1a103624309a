"""Where an error happened and how it prints: source spans, the error types, the one renderer. Every layer raises located errors, so this package sits below all of them."""
