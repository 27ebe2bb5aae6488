from toolwire.cli import main

raise SystemExit(main())
