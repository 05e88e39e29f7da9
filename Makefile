# GeoFaham — the two commands that matter:
#   make run    set everything up (idempotent, cached in ~/.cache/geofaham) and launch QGIS with GeoFaham
#   make test   set up what is missing and run the whole test suite headless
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
QM := $(patsubst %.ts,%.qm,$(wildcard i18n/*.ts))

.PHONY: setup run test test-fast translations i18n zip clean-profile

setup:
	scripts/setup.sh
	$(MAKE) --no-print-directory translations

i18n/%.qm: i18n/%.ts
	lrelease -silent $< -qm $@

translations: $(QM)

# refresh i18n/*.ts from every tr("...") in the UI code, then build .qm
i18n:
	$(PY) scripts/i18n.py
	$(MAKE) --no-print-directory translations

run: setup
	scripts/run_qgis.sh

test: setup
	scripts/test.sh

# only the tests, assuming `make setup` has run
test-fast: translations
	scripts/test.sh

zip: translations
	yes | $(VENV)/bin/pb_tool zip -n -p zip_build

clean-profile:
	rm -rf .qgis-profile
