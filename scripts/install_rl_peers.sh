#!/usr/bin/env bash
# The RL frameworks toolwire's adapters are tested against, without their GPU stacks: verl 0.9.1
# and TRL 1.16.0 with --no-deps, plus the few pure-Python modules verl's agent-loop parser
# registry imports (tests/test_verl.py, tests/test_trl.py skip when these are missing), the
# `renderers` reference renderers, and Ray Data for BatchScorer.
set -euo pipefail
PIP="${PIP:-python -m pip}"
$PIP install --no-deps verl==0.9.1 trl==1.16.0 tensordict pyvers omegaconf hydra-core \
    antlr4-python3-runtime==4.9.3 codetiming datasets multiprocess dill xxhash uvicorn
$PIP install renderers==0.1.12 httpx "ray[data]"
