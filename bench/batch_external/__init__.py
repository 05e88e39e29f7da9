"""An external split for batch mode: everyday GIS file tasks, their generated inputs, an independent grader and a
black-box runner. Written without reading how the product reads an instruction (see ``bench/README.md``)."""
