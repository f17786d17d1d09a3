# The README's two commands. Both run the idempotent set-up first.
.PHONY: setup demo test build

setup:
	bash scripts/setup.sh

build: setup
	cargo build --release

demo: build
	./target/release/tessel demo

test: setup
	cargo test --release --workspace
	bash scripts/lavapipe_coop_check.sh
	@if python3 -c 'import torch, numpy' 2>/dev/null; then python3 train/check_golden.py && python3 train/check_hazards.py --device cpu && python3 train/check_soup.py && python3 train/check_grow.py && python3 train/check_arch.py && python3 train/check_layout.py && python3 train/check_taau.py; \
	else echo "skipped: no PyTorch: train/check_golden.py (the PyTorch twin against the golden vectors), train/check_hazards.py (the training scenes), train/check_soup.py (package averaging), train/check_grow.py (grown networks start as their package), train/check_arch.py (the shapes train.py --arch allows), train/check_layout.py (the gather layouts start as the package) and train/check_taau.py (the classical TAAU's torch port against the binary) did not run"; fi
