# Developer shortcuts.  The README's commands are the reference; these wrap them.
PY ?= python3

.PHONY: install dev test corpus golden cases xla-check xla-verify bench bench-run bench-check bench-table lint clean

install:            ## install the package (what a user does)
	pip install .

dev:                ## editable install with test tools
	pip install -e '.[test]'

test:               ## the test suite (same command as the README and .ci/run)
	pip install '.[test]' && pytest

corpus:             ## regenerate tests/corpus/jax with JAX (dev only: pip install jax)
	$(PY) tools/make_corpus.py

golden:             ## regenerate make_golden's families of tests/golden with JAX/XLA:CPU (dev only)
	$(PY) tools/make_golden.py

cases:              ## regenerate one family of tests/golden: make cases FAMILY=window [OPCODE=pad] (dev only)
	$(PY) -m tools.oracle regen $(FAMILY) $(if $(OPCODE),--opcode $(OPCODE))

xla-verify:         ## agreement of `hlo check` with XLA's verifier (needs jax)
	$(PY) tools/xla_verify_compare.py

xla-check:          ## compare our printing with XLA's own parser over the corpus (needs jax)
	$(PY) tools/xla_accept_check.py tests/corpus

bench:              ## parse speed (needs jax for the large dump and XLA's parser)
	$(PY) bench/parse.py

bench-run:          ## hlo-run vs hand-written NumPy vs XLA:CPU (needs jax)
	$(PY) bench/run.py

bench-check:        ## hlo check throughput, -j 1 vs -j 2
	$(PY) bench/check.py

bench-table:        ## the speed table: start-up, hlo-run vs NumPy, check/info vs fmt, fmt vs XLA's parser
	$(PY) bench/table.py $(if $(BASE),--base $(BASE))

lint:               ## static checks (pip install ruff)
	$(PY) -m ruff check hlo_interp tests tools bench

clean:
	rm -rf build dist *.egg-info .pytest_cache .hypothesis
