"""Score: each case's metrics over its runs, and its status."""
