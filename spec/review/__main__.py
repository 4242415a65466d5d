from spec.review.pages import main

raise SystemExit(main())
