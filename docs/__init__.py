"""Tools that keep the documentation true to the code (not shipped in the wheel)."""
