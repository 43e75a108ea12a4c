from wheeldoc.cli import main

raise SystemExit(main())
