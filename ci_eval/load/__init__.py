"""Load: find eval sets, read them and their sidecars in any dialect, validate, convert."""
