"""Code a pull request controls runs in a worker process, never in the trusted one.

The trusted process holds ``GITHUB_TOKEN`` and the judge's key and writes the verdict, the
reports and the baseline; it imports no workspace code (:mod:`.workspace`). What the repository
supplies that executes runs in one of a run's two workers:

- the **metrics worker**: ``[custom_metrics]``, ADK ``code_config`` metrics and metric plugins
  installed in the workspace. Its code must be the merge base's: every workspace file it
  executes is compared with it, and once one differs every metric it computes from then on is
  NOT_EVALUATED, naming the file (the code shares one process: one changed file could change
  any of them).
- the **agent worker**: ``--agent adk``'s in-process ADK agent, the pull request's code by
  design, kept apart from the metrics so that it cannot change how it is scored.

Both get the environment an agent gets and, where ci-eval is root, the agent's user.

Its modules: the trusted side starts, asks and stops the workers (:mod:`.processes`, one worker
:mod:`.client`, the :mod:`.protocol` both sides speak, the :mod:`.workspace` path rules); the
worker itself serves requests (:mod:`.serve`, :mod:`.ops`). This file imports nothing, so each
side is a layer of its own.
"""
