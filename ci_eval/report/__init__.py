"""Reporters: JUnit XML, Markdown (job summary and PR comment), ADK-format results. Each turns
the plain results into text; writing files and talking to GitHub happen elsewhere."""
