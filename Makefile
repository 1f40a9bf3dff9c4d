# gw10 workbook. `make help` lists the targets.
#
# Learners: `make check` (your step against the acceptance checks).
# Project:  `make test` (the workbook's own test suite).

STEP ?= step01
CLUSTER ?= envtest
# Extra flags for the harness, e.g. CHECK_FLAGS="--run self-heal -v".
CHECK_FLAGS ?=
# make grade: the learner's repository (path or git URL) and commit to grade
# in this checkout at UPSTREAM_REF; no SUBMISSION: feedback on this checkout.
SUBMISSION ?=
SUBMISSION_REF ?= HEAD
UPSTREAM_REF ?= HEAD
GRADE_OUT ?= reports
# make gradebook: the roster (one submission a line, or CSV), how many grades
# at once (default: from the cores), and where the gradebook goes: GRADE_OUT
# when given, else reports/gradebook.
ROSTER ?=
JOBS ?=
GRADEBOOK_OUT_DEFAULT := $(filter file default undefined,$(origin GRADE_OUT))
# Every input a target takes from whoever runs it (a bot may forward a
# learner's branch name to make grade) reaches the shell as a quoted
# environment variable ("$$X"), never spliced into a command line.
# $(value) keeps make from expanding them too: a value such as
# '$(shell ...)' stays text. harness/grade/makefile_inputs_test.go drives
# every target below with hostile values.
# make diff: VIEW=learner|solution; SUBMISSION (above) and REF (commit or
# branch, default HEAD): a learner's repository instead of STEP.
VIEW ?=
REF ?=
# make hint: a check, contract clause or chapter question; for a check,
# MORE=1: where to look; MORE=2: its design, in words.
ID ?=
MORE ?=
# make skeleton, make sketch: overwrite uncommitted edits of the learner modules (step01/).
FORCE ?=
# make template: where the learner's copy goes (a new directory).
TEMPLATE_OUT ?= ../gw10-learner
# make proxy: the address the stand-in proxy serves on.
PROXY_ADDR ?= 127.0.0.1:9901
STEP_ORIGIN := $(origin STEP)
override STEP := $(value STEP)
override CLUSTER := $(value CLUSTER)
override SUBMISSION := $(value SUBMISSION)
override SUBMISSION_REF := $(value SUBMISSION_REF)
override UPSTREAM_REF := $(value UPSTREAM_REF)
override GRADE_OUT := $(value GRADE_OUT)
override ROSTER := $(value ROSTER)
override JOBS := $(value JOBS)
override GRADEBOOK_OUT := $(if $(GRADEBOOK_OUT_DEFAULT),reports/gradebook,$(value GRADE_OUT))
override VIEW := $(value VIEW)
override REF := $(value REF)
override ID := $(value ID)
override MORE := $(value MORE)
override FORCE := $(value FORCE)
override TEMPLATE_OUT := $(value TEMPLATE_OUT)
override SAMPLE := $(value SAMPLE)
override SEED := $(value SEED)
override ONLY := $(value ONLY)
override PROXY_ADDR := $(value PROXY_ADDR)
# CHECK_FLAGS is split into words by the shell but never evaluated (set -f:
# no globbing either).
override CHECK_FLAGS := $(value CHECK_FLAGS)
export STEP CLUSTER CHECK_FLAGS SUBMISSION SUBMISSION_REF UPSTREAM_REF GRADE_OUT ROSTER JOBS GRADEBOOK_OUT VIEW REF ID MORE FORCE TEMPLATE_OUT SAMPLE SEED ONLY PROXY_ADDR
GW10 := bin/gw10
GW10_FULL := bin/gw10-full
# make check and make grade on CLUSTER=kind need the full build.
CHECK_GW10 := $(if $(filter kind,$(CLUSTER)),$(GW10_FULL),$(GW10))

.DEFAULT_GOAL := help

# The instructors' and maintainers' targets: make help leaves them out of a
# learner's copy (no solutions/), where most of them cannot work.
UPSTREAM_TARGETS := gradebook diff template skeleton mutants lint lint-workflows test-deps test-unit test-envtest test-mutants test kind-image test-kind

.PHONY: help
help: ## Show this help.
	@echo "gw10 workbook — make <target> [STEP=step01] [CLUSTER=envtest|kind|existing]"
	@echo "Learners: read docs/step01.md, fill the TODO(step01) regions in step01/, run make check (or make watch)."
	@echo
	@if [ -t 1 ] && [ -z "$$NO_COLOR" ]; then on='\033[36m'; off='\033[0m'; else on=; off=; fi; \
	  if [ -d solutions ]; then hide=; else hide=' $(UPSTREAM_TARGETS) '; fi; \
	  awk -v on="$$on" -v off="$$off" -v hide="$$hide" 'BEGIN {FS = ":.*##"} /^[a-zA-Z_-]+:.*?##/ { if (index(hide, " " $$1 " ")) next; printf "  %s%-14s%s %s\n", on, $$1, off, $$2 }' $(MAKEFILE_LIST); \
	  if [ -n "$$hide" ]; then echo; echo "  Not listed: the instructors' and maintainers' targets ($(UPSTREAM_TARGETS)), which need the instructors' repository."; fi

# Always rebuilt; go build's cache makes that instant when nothing changed.
# A cold build (fresh machine, empty Go cache) compiles Kubernetes' client
# libraries for minutes: progress.sh says so after 5 s, and every 10 s after.
# (5, not progress.sh's 2: on a busy machine an up-to-date check of the
# binary alone takes 2-3 s, and its line would repeat on every target.)
# bin/gw10 is the checking build (-tags gw10checkonly): no bench and its
# charts, no kind backend, no kind node image builder. bin/gw10-full has
# them; only make bench, make kind-image and CLUSTER=kind build it.
.PHONY: $(GW10)
$(GW10):
	@if [ -x $(GW10) ]; then msg="bringing the gw10 harness up to date (seconds; longer on a busy machine) ..."; \
	  else msg="building the gw10 harness (first run on a fresh machine: 2 to 9 minutes on 2 cores; later runs: seconds) ..."; fi; \
	  PROGRESS_QUIET=5 sh scripts/progress.sh "$$msg" -- go build -tags gw10checkonly -o $(GW10) ./harness/cmd/gw10

.PHONY: $(GW10_FULL)
$(GW10_FULL):
	@PROGRESS_QUIET=5 sh scripts/progress.sh "bringing bin/gw10-full up to date (the harness with bench, kind and kind-image; first build: minutes) ..." -- \
	  go build -o $(GW10_FULL) ./harness/cmd/gw10

.PHONY: assets
assets: $(GW10) ## Obtain the envtest binaries (first run builds them from source: minutes).
	@$(GW10) assets

.PHONY: assets-path
assets-path: $(GW10)
	@$(GW10) assets --print-path

.PHONY: check
check: $(CHECK_GW10) ## Run the acceptance checks against STEP (default step01) on CLUSTER (default envtest).
	@set -f; $(CHECK_GW10) check --step "$$STEP" --cluster "$$CLUSTER" $$CHECK_FLAGS

.PHONY: watch
watch: $(GW10) ## Rerun the checks on every saved change under STEP (control plane kept up between runs; Ctrl-C stops).
	@set -f; exec $(GW10) watch --step "$$STEP" $$CHECK_FLAGS

.PHONY: grade
grade: $(CHECK_GW10) ## Grade SUBMISSION=<path|URL|bundle> [SUBMISSION_REF=] [GRADE_OUT=reports] with this checkout's harness (none: feedback on step01/).
	@set -f; $(CHECK_GW10) grade --step "$$STEP" --cluster "$$CLUSTER" --submission "$$SUBMISSION" --submission-ref "$$SUBMISSION_REF" \
	  --upstream-ref "$$UPSTREAM_REF" --out "$$GRADE_OUT" $$CHECK_FLAGS

.PHONY: gradebook
gradebook: $(CHECK_GW10) ## Instructors: grade every submission of ROSTER=<file> [JOBS=n] [GRADE_OUT=reports/gradebook] as make grade does, into gradebook.csv and .html; a commit this grader graded before is not graded again.
	@$(CHECK_GW10) gradebook --step "$$STEP" --cluster "$$CLUSTER" --roster "$$ROSTER" --upstream-ref "$$UPSTREAM_REF" --out "$$GRADEBOOK_OUT" --jobs "$$JOBS"

.PHONY: lint-workflows
lint-workflows: ## Lint .github/workflows with the pinned actionlint.
	go tool actionlint .github/workflows/*.yml

.PHONY: hint
hint: $(GW10) ## What a check requires and the questions that lead to it (MORE=1: where to look; MORE=2: how to build it), a contract clause, or a chapter question: make hint ID=self-heal, ID=S-MISSING, ID=q-owns
	@set -- ; if [ -n "$$ID" ]; then set -- -- "$$ID"; fi; if [ -n "$$MORE" ]; then set -- --more="$$MORE" "$$@"; fi; $(GW10) hint --step "$$STEP" "$$@"

.PHONY: diff
diff: $(GW10) ## Instructors: step01/ against the solution; VIEW=learner: what the learner changed; SUBMISSION=<path|URL> [REF=]: a learner's repository against the skeleton.
	@$(GW10) diff --step "$$STEP" --view "$$VIEW" --submission "$$SUBMISSION" --ref "$$REF"

.PHONY: sketch
sketch: $(GW10) ## Save the card's sketch (docs/step01-sketch.go.txt) over step01's controller, where the chapter starts. Refuses to overwrite your uncommitted edits (FORCE=1 does).
	@$(GW10) sketch --step "$$STEP" --force "$$FORCE"

.PHONY: template
template: $(GW10) ## Instructors: write a learner's copy of this checkout at UPSTREAM_REF (no solutions/, no answer key) to TEMPLATE_OUT, a new git repository.
	@$(GW10) template --out "$$TEMPLATE_OUT" --ref "$$UPSTREAM_REF"

.PHONY: skeleton
skeleton: $(GW10) ## Regenerate every step's learner module (step01/) from its solution (maintainers; refuses to overwrite edits).
	@set -e; dirs="$$($(GW10) steps --field dir)"; \
	if [ -z "$$FORCE" ] && [ -n "$$(git status --porcelain -- $$dirs 2>/dev/null)" ]; then \
	  echo "$$dirs: uncommitted changes; regenerating would overwrite them. Commit them or use FORCE=1."; exit 1; fi
	@$(GW10) skeleton

.PHONY: mutants
mutants: $(GW10) ## Maintainers: score the checks against mutants generated in the solution's regions (SAMPLE=N SEED=S ONLY=key,…; up to a minute each).
	@$(GW10) mutants --sample "$${SAMPLE:-0}" --seed "$${SEED:-1}" --only "$${ONLY:-}"

# exec: the proxy is make's child itself, not a shell's, so the SIGTERM make
# passes its children on (kill <make's pid>) stops it too.
.PHONY: proxy
proxy: $(GW10) ## Run the stand-in proxy on 127.0.0.1:9901 for the hand-run tasks (a table that outlives the controller; Ctrl-C stops it). PROXY_ADDR=127.0.0.1:9902: another address.
	@exec $(GW10) proxy --listen "$$PROXY_ADDR"

.PHONY: cluster-up
cluster-up: $(GW10) ## Start the dev control plane in the background; prints the KUBECONFIG to export.
	@$(GW10) cluster-up

.PHONY: cluster-down
cluster-down: $(GW10) ## Stop the dev control plane and remove its data.
	@$(GW10) cluster-down

GOLANGCI_LINT := bin/golangci-lint

# golangci-lint is pinned in tools/lint/go.mod, a module of its own so that
# its dependencies stay out of the harness's go.mod.
$(GOLANGCI_LINT): tools/lint/go.mod tools/lint/go.sum
	@sh scripts/progress.sh "building golangci-lint (pinned in tools/lint; first run: a few minutes) ..." -- \
	  sh -c 'cd tools/lint && GOWORK=off go build -o ../../$(GOLANGCI_LINT) github.com/golangci/golangci-lint/v2/cmd/golangci-lint'

# golangci-lint reads each solution, not the learner modules: a skeleton is
# generated from its solution, and its stubs leave code unused until the
# learner writes it. The steps come from their descriptors (gw10 steps).
.PHONY: lint
lint: $(GOLANGCI_LINT) $(GW10) lint-workflows ## gofmt, go vet and golangci-lint (.golangci.yml) over every module, actionlint over the workflows.
	@set -e; dirs="$$($(GW10) steps --field dir)"; unformatted="$$(gofmt -l harness solutions $$dirs)"; \
	  if [ -n "$$unformatted" ]; then echo "not gofmt'ed:"; echo "$$unformatted"; exit 1; fi; \
	  pkgs="./harness/... $$(for d in $$dirs; do printf './%s/... ' "$$d"; done)"; echo "go vet $$pkgs"; go vet $$pkgs
	go vet -tags gw10checkonly ./harness/cmd/gw10
	@set -e; for d in $$($(GW10) steps --field solution); do echo "cd $$d && GOWORK=off go vet ./..."; (cd $$d && GOWORK=off go vet ./...); done
	$(GOLANGCI_LINT) run ./harness/...
	@set -e; for d in $$($(GW10) steps --field solution); do echo "cd $$d && golangci-lint run ./..."; (cd $$d && GOWORK=off $(CURDIR)/$(GOLANGCI_LINT) run ./...); done

# make test-mutants: SHARD=i/n runs the i-th of n shares of the kill table's
# runs (harness/runner's mutant and variant tests), for jobs side by side.
SHARD ?=
override SHARD := $(value SHARD)
export SHARD

.PHONY: test-needs-solutions
test-needs-solutions:
	@if [ ! -d solutions ]; then \
	  echo "make test is the workbook's own test suite: it proves the harness against the reference solution in solutions/,"; \
	  echo "which a learner's copy does not hold. Your command is make check (make help lists the others)."; exit 2; fi

# The tiers. A test says what it needs beyond Go (harness/testenv): under
# -short, a test that needs a control plane, a sandbox user or a browser, or
# that takes minutes, is skipped. No target here installs anything: make
# test-deps does, and CI runs it first.
MUTANT_TESTS := ^(TestEveryMutantFailsItsCheckWithItsCause|TestEveryVariantPasses)$$
GO_TEST := go test -count=1
# How many parallel tests run at once in a package on envtest, and so how
# many control planes the runner package's pool holds: its runs mostly wait
# (a variant's controller), and with four the two cores were idle 30-70% of
# the time; six cut the package from 1153 s to 898 s (docs/harness.md,
# "make test's time").
TEST_PARALLEL ?= 6
KILL_TABLE := if [ -f .gw10/kill-table.txt ]; then echo; echo "kill table (harness/testdata/*/mutants must fail, variants must pass):"; cat .gw10/kill-table.txt; fi
# Every step's solution's own suite (envtest), on its own go.mod.
SOLUTION_TESTS = for d in $$($(GW10) steps --field solution); do \
	    (cd $$d && KUBEBUILDER_ASSETS="$$assets" GOWORK=off $(GO_TEST) -timeout 10m ./...) || status=$$?; done

.PHONY: test-deps
test-deps: $(GW10) ## What the tests need beyond Go, installed: the envtest binaries and chromium (Debian's, for the timeline's browser test; as root).
	@$(GW10) assets
	@if command -v chromium >/dev/null; then echo "chromium: $$(command -v chromium)"; \
	  else echo "installing chromium (Debian) for the timeline's browser test ..."; apt-get update -qq && apt-get install -y -qq chromium >/dev/null; fi

# The learner module's own tests (step01's conditions_test.go) fail on the
# pristine skeleton by design; the harness's skeleton test runs them and
# asserts exactly that, so the tiers test the harness and the solution.
.PHONY: test-unit
test-unit: test-needs-solutions ## The fast tier: the harness's tests that need no cluster (go test -short; about 2 minutes on 2 cores).
	@if [ -n "$$GW10_SKIPPED" ]; then mkdir -p "$$(dirname "$$GW10_SKIPPED")" && rm -f "$$GW10_SKIPPED"; fi
	sh scripts/progress_test.sh
	$(GO_TEST) -short -timeout 10m ./harness/...

.PHONY: test-envtest
test-envtest: test-needs-solutions $(GW10) ## The tests on envtest (with the unit tier's), without the mutants and variants; every solution's own suite.
	@$(GW10) assets
	@status=0; assets="$$($(GW10) assets --print-path)"; $(SOLUTION_TESTS); \
	  KUBEBUILDER_ASSETS="$$assets" $(GO_TEST) -parallel $(TEST_PARALLEL) -timeout 75m -skip '$(MUTANT_TESTS)' ./harness/... || status=$$?; exit $$status

.PHONY: test-mutants
test-mutants: test-needs-solutions $(GW10) ## The kill table: every mutant fails its check, every variant passes (SHARD=i/n: the i-th of n shares).
	@$(GW10) assets
	@rm -f .gw10/kill-table.txt
	@status=0; KUBEBUILDER_ASSETS="$$($(GW10) assets --print-path)" GW10_SHARD="$$SHARD" \
	  $(GO_TEST) -parallel $(TEST_PARALLEL) -timeout 75m -run '$(MUTANT_TESTS)' ./harness/runner || status=$$?; $(KILL_TABLE); exit $$status

# make test runs every test once: the unit tier first (it fails in minutes,
# not after the long runs), which lists the tests it skips in GW10_SKIPPED
# (harness/testenv); then those, the envtest and mutant tiers together in
# one go test run (the runner's pool of control planes interleaves them), and
# every solution's suite.
.PHONY: test
test: export GW10_SKIPPED := $(CURDIR)/.gw10/skipped-by-unit.txt
test: test-needs-solutions $(GW10) lint test-unit ## The workbook's own test suite (needs solutions/): lint, then every tier (about 25 minutes on 2 cores).
	@$(GW10) assets
	@rm -f .gw10/kill-table.txt
	@echo "the tests the unit tier skipped (on envtest: the runner package is the long one) and every step's solution's suite"
	@status=0; assets="$$($(GW10) assets --print-path)"; $(SOLUTION_TESTS); \
	  if [ -s "$$GW10_SKIPPED" ]; then \
	    pkgs="$$(cut -f1 "$$GW10_SKIPPED" | sort -u)"; names="$$(cut -f2 "$$GW10_SKIPPED" | sort -u | paste -sd'|' -)"; \
	    KUBEBUILDER_ASSETS="$$assets" GW10_SKIPPED= $(GO_TEST) -parallel $(TEST_PARALLEL) -timeout 75m -run "^($$names)\$$" $$pkgs || status=$$?; fi; \
	  $(KILL_TABLE); exit $$status

.PHONY: kind-image
kind-image: $(GW10_FULL) ## Build the kind node image from the Go module proxy and Debian packages (first run: about an hour).
	@$(GW10_FULL) kind-image

.PHONY: test-kind
test-kind: ## kind end to end: engine, node image, kind-up, the solution, both checks, kind-down.
	@scripts/test-kind.sh

# make bench: the solution by default (step01 in a learner's copy); ROUTES the numbers of EdgeRoutes to
# measure, REPEAT how many runs of each; CHECK_REPORT a `gw10 check --json` report to include.
ROUTES ?= 100,1000,5000
REPEAT ?= 3
CHECK_REPORT ?=
override ROUTES := $(value ROUTES)
override REPEAT := $(value REPEAT)
override CHECK_REPORT := $(value CHECK_REPORT)
# BENCH_STEP: as given, else STEP when given on the command line, else the
# solution, or step01 in a learner's copy (which has no solutions/).
ifneq ($(filter command line environment override,$(origin BENCH_STEP)),)
override BENCH_STEP := $(value BENCH_STEP)
else
override BENCH_STEP := $(if $(filter command line,$(STEP_ORIGIN)),$(STEP),$(if $(wildcard solutions/step01),solutions/step01,step01))
endif
export ROUTES REPEAT CHECK_REPORT BENCH_STEP

.PHONY: bench
bench: $(GW10_FULL) ## How STEP's controller scales (default the solution, or step01 without solutions/; ROUTES=100,1000,5000, REPEAT=3 runs each: median and spread), against the API server's own limit; reports/bench.*.
	@set -- ; if [ -n "$$CHECK_REPORT" ]; then set -- --check-report "$$CHECK_REPORT"; fi; \
	  $(GW10_FULL) bench --step "$$BENCH_STEP" --routes "$$ROUTES" --repeat "$$REPEAT" "$$@" --out reports
