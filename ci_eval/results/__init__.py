"""The results file: written and read case by case, spilled, merged."""
