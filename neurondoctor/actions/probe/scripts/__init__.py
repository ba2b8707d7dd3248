"""Scripts run by target interpreters; they import only the standard library and torch."""
