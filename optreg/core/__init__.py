"""The registry core: entry rows, the Registry (lookup, dialects, plugins), option types and models, validation,
parameter groups, the builders and describe(). Nothing is imported here."""
