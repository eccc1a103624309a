"""Data under a public schema: column specs and their checks, reading tables."""
