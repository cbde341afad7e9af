"""Text that leaves or enters ci-eval: redaction, inert text, escaping, surrogates, templates."""
