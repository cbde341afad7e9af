from ci_eval.cli import main

main()
