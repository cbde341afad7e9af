from ci_eval.worker.serve import main

raise SystemExit(main())
