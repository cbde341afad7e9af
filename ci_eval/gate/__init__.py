"""Gate: compare with main's history, judge each case, decide, and say why."""
