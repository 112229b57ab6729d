"""The experiment config: the YAML loader, the Experiment model, its JSON Schema export and step expressions.
Nothing is imported here."""
