"""Run: play each case's turns against the agent, within deadlines, for the selected cases."""
